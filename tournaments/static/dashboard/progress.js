/* Keep a tournament's page live: poll its small progress JSON, update the bar in place, and when
 * matches have changed state, fetch the page again and swap in its standings and fixtures. */
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (!box) return;
  var bar = document.getElementById("progress-bar");
  var COUNTED = ["done", "running", "queued", "failed", "cancelled"];
  function countsOf(get) { return COUNTED.map(get).join(","); }
  // The counts the page shows, to notice when matches change state.
  var seen = countsOf(function (name) {
    var node = box.querySelector('[data-field="' + name + '"]');
    return node ? node.textContent.trim() : "";
  });
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
    var counts = countsOf(function (name) { return String(p[name]); });
    if (counts !== seen) refreshSections();
    seen = counts;
    box.dataset.settled = p.settled ? "true" : "false";
  }

  // The standings and this page of fixtures, as the server renders them now.
  function refreshSections() {
    fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("section[data-live]").forEach(function (section) {
          var update = fresh.getElementById(section.id);
          if (update) section.replaceChildren.apply(section, Array.from(update.childNodes));
        });
        document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      })
      .catch(function () { /* the next change tries again */ });
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
