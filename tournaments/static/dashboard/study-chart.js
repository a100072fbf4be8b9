/* Draw <figure data-study-chart="id">: median Kendall tau by matches played, per rating arm.
   Needs charts.js loaded first (window.OhHellCharts). */
(function () {
  "use strict";
  var PALETTE = ["#dc2626", "#d97706", "#7c3aed", "#2563eb"];
  var HEIGHT = 300;
  var charts = window.OhHellCharts;

  function draw(figure) {
    var data = JSON.parse(document.getElementById(figure.dataset.studyChart).textContent);
    var series = [{ label: "matches", value: function (u, v) { return v == null ? "" : v; } }].concat(
      charts.lines(data, PALETTE, { points: { show: true } }));
    charts.plot(figure, data, {
      series: series,
      scales: { x: { time: false, distr: 3, log: 2 }, y: { range: [0, 1] } },
      axes: [
        { label: "matches played", values: function (u, ticks) { return ticks.map(String); } },
        { label: "Kendall tau (median)", size: 60 }
      ],
      legend: { live: false }
    }, HEIGHT);
  }

  document.querySelectorAll("figure[data-study-chart]").forEach(draw);
})();
