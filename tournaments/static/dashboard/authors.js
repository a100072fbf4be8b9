// The bot authors' pages: copy buttons for the secret and commands.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.dataset.copy);
      field.select();
      var done = function () { button.textContent = "Copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          document.execCommand("copy"); done();
        });
      } else {
        document.execCommand("copy"); done();
      }
    });
  });
})();

// A verification just asked for: poll its check until a worker has called the bot.
(function () {
  "use strict";
  var box = document.getElementById("check-result");
  if (!box || !box.dataset.poll) { return; }
  var LABELS = { active: "active", pending: "pending verification", disabled: "disabled" };
  var tries = 0;
  var getJSON = function (url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(new Error(String(r.status))); });
  };
  var show = function (check) {
    box.dataset.status = check.status;
    box.className = "result-box " + check.status;
    if (check.ok) {
      box.textContent = "Passed in " + check.latency_ms + " ms: your bot is verified.";
    } else {
      var kind = String(check.error_kind || "").replace(/_/g, " ");
      box.textContent = "Failed: " + kind + (check.error_message ? ": " + check.error_message : "") + ".";
    }
    getJSON(box.dataset.bot).then(function (bot) {
      var badge = document.getElementById("bot-status");
      if (badge && LABELS[bot.status]) {
        badge.textContent = LABELS[bot.status];
        badge.className = "status status-" + bot.status;
      }
    }, function () {});
  };
  var poll = function () {
    tries += 1;
    getJSON(box.dataset.poll).then(function (check) {
      if (check.status !== "pending") { show(check); return; }
      if (tries < 120) { setTimeout(poll, 1000); } else { box.textContent = "Still checking: reload the page later."; }
    }, function () {
      if (tries < 120) { setTimeout(poll, 2000); }
    });
  };
  setTimeout(poll, 300);
})();
