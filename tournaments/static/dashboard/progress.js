/* Keep a tournament's progress bar live: poll its small JSON view and update the page in place. */
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (!box) return;
  var bar = document.getElementById("progress-bar");
  var note = box.querySelector(".live-note");
  var loadedDone = Number(bar.value);
  var INTERVAL_MS = 1500;
  var timer = null;

  function describeFinish(iso) {
    if (!iso) return null;
    var when = new Date(iso);
    var minutes = Math.round((when - Date.now()) / 60000);
    var at = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (minutes <= 0) return "any moment now (" + at + ")";
    if (minutes < 90) return "in about " + minutes + " min (" + at + ")";
    return when.toLocaleString();
  }

  function setField(name, value) {
    var el = box.querySelector('[data-field="' + name + '"]');
    if (el && value != null) el.textContent = value;
  }

  function apply(p) {
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
    bar.textContent = p.percent + "%";
    ["done", "total", "percent", "finished", "running", "queued", "failed", "cancelled", "status_label"]
      .forEach(function (name) { setField(name, p[name]); });
    var status = box.querySelector('[data-field="status_label"]');
    status.className = "status status-" + p.status;
    setField("estimated_finish", describeFinish(p.estimated_finish) || (p.settled ? "—" : "not yet known"));
    if (p.done !== loadedDone) note.hidden = false;
    box.dataset.settled = p.settled ? "true" : "false";
  }

  function poll() {
    fetch(box.dataset.url, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(apply)
      .catch(function () { /* a missed poll is retried on the next tick */ })
      .finally(schedule);
  }

  function schedule() {
    if (box.dataset.settled === "true") return;
    timer = setTimeout(function () {
      if (document.hidden) schedule(); else poll();
    }, INTERVAL_MS);
  }

  var finish = box.querySelector('[data-field="estimated_finish"]');
  var described = describeFinish(finish.dataset.iso);
  if (described) finish.textContent = described;
  schedule();
  window.addEventListener("pagehide", function () { clearTimeout(timer); });
})();
