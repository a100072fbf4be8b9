/* Draw each <figure data-chart="id"> with uPlot from the JSON in <script id="id">.
   The set-up every chart of the dashboard shares is window.OhHellCharts (study-chart.js too). */
(function () {
  "use strict";
  var PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563",
    "#65a30d", "#9333ea"];
  var HEIGHT = 320;

  function formatTime(u, value) {
    return value == null ? "" : new Date(value * 1000).toLocaleString();
  }

  // uPlot widens the range of one instant by years; show the points' own span, padded by a
  // little and at least two hours wide.
  var MIN_SPAN_S = 2 * 3600;
  function timeRange(times) {
    var min = times[0], max = times[times.length - 1];
    var pad = Math.max((max - min) * 0.04, (MIN_SPAN_S - (max - min)) / 2);
    return [min - pad, max + pad];
  }

  // One line a series of {x, series: [{label, values}]}, coloured from the palette in turn,
  // its values shown to two places; ``extra`` adds options to every line.
  function lines(data, palette, extra) {
    return data.series.map(function (s, i) {
      return Object.assign({
        label: s.label,
        stroke: palette[i % palette.length],
        width: 2,
        value: function (u, v) { return v == null ? "–" : v.toFixed(2); }
      }, extra);
    });
  }

  // Plot the data in the figure at its width (at least 280 px), follow the window's width,
  // and mark the figure drawn.
  function plot(figure, data, options, height) {
    options.width = Math.max(figure.clientWidth, 280);
    options.height = height;
    var columns = [data.x].concat(data.series.map(function (s) { return s.values; }));
    var chart = new uPlot(options, columns, figure);
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        chart.setSize({ width: Math.max(figure.clientWidth, 280), height: height });
      }, 100);
    });
    figure.classList.add("drawn");
  }

  window.OhHellCharts = { lines: lines, plot: plot };

  function draw(figure) {
    var data = JSON.parse(document.getElementById(figure.dataset.chart).textContent);
    var few = data.x.length < 60;
    var series = [{ label: "after match at", value: formatTime }].concat(
      lines(data, PALETTE, { spanGaps: true, points: { show: few } }));
    plot(figure, data, {
      series: series,
      scales: { x: { time: true, auto: false, range: timeRange(data.x) } },
      axes: [{}, { label: figure.dataset.yLabel, size: 60 }],
      legend: { live: true },
      hooks: {
        // The time range shown, for people reading the page's source and for its tests.
        setScale: [function (u, key) {
          if (key === "x") figure.dataset.xRange = u.scales.x.min + "," + u.scales.x.max;
        }]
      }
    }, HEIGHT);
  }

  document.querySelectorAll("figure[data-chart]").forEach(draw);
})();
