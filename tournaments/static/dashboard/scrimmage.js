/* Keep a scrimmage's page live: while its matches are being played, fetch the page again now
 * and then and swap in the fresh section, until every match has ended. */
(function () {
  "use strict";
  var INTERVAL_MS = 1500;
  function section() { return document.getElementById("scrimmage"); }
  if (!section() || section().dataset.live !== "true") return;

  function refresh() {
    fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("scrimmage");
        var current = section();
        if (fresh && current) {
          current.replaceChildren.apply(current, Array.from(fresh.childNodes));
          current.dataset.live = fresh.dataset.live;
          current.dataset.status = fresh.dataset.status;
        }
      })
      .catch(function () { /* tried again below */ })
      .then(function () {
        if (section() && section().dataset.live === "true") setTimeout(refresh, INTERVAL_MS);
      });
  }
  setTimeout(refresh, INTERVAL_MS);
})();
