/* Draw <figure data-study-chart="id">: median Kendall tau by matches played, per rating arm. */
(function () {
  "use strict";
  var PALETTE = ["#dc2626", "#d97706", "#7c3aed", "#2563eb"];
  var HEIGHT = 300;

  function draw(figure) {
    var data = JSON.parse(document.getElementById(figure.dataset.studyChart).textContent);
    var series = [{ label: "matches", value: function (u, v) { return v == null ? "" : v; } }];
    data.series.forEach(function (s, i) {
      series.push({
        label: s.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        points: { show: true },
        value: function (u, v) { return v == null ? "–" : v.toFixed(2); }
      });
    });
    var options = {
      width: Math.max(figure.clientWidth, 280),
      height: HEIGHT,
      series: series,
      scales: { x: { time: false, distr: 3, log: 2 }, y: { range: [0, 1] } },
      axes: [
        { label: "matches played", values: function (u, ticks) { return ticks.map(String); } },
        { label: "Kendall tau (median)", size: 60 }
      ],
      legend: { live: false }
    };
    var columns = [data.x].concat(data.series.map(function (s) { return s.values; }));
    var plot = new uPlot(options, columns, figure);
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        plot.setSize({ width: Math.max(figure.clientWidth, 280), height: HEIGHT });
      }, 100);
    });
    figure.classList.add("drawn");
  }

  document.querySelectorAll("figure[data-study-chart]").forEach(draw);
})();
