/* Draw each <figure data-chart="id"> with uPlot from the JSON in <script id="id">.
   The set-up every chart of the dashboard shares is window.OhHellCharts (study-chart.js too).
   Two kinds: ratings of several series over time (the leaderboard), and one bot's rating by
   match number with its uncertainty as a band ({band: true}, tournaments/dashboard/charts.py). */
(function () {
  "use strict";
  var PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563",
    "#65a30d", "#9333ea"];
  var HEIGHT = 320;
  // Steps between the ticks of a match-number axis: whole matches only.
  var WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

  // The last value of a series, which the legend shows while the cursor is off the chart.
  function latest(values) {
    for (var i = values.length - 1; i >= 0; i--) {
      if (values[i] != null) return values[i];
    }
    return null;
  }

  function formatTime(value) {
    return new Date(value * 1000).toLocaleString();
  }

  // A legend value to two places: under the cursor, or the series' latest off the chart.
  function twoPlaces(u, v, seriesIdx, idx) {
    var value = idx == null ? latest(u.data[seriesIdx]) : v;
    return value == null ? "–" : value.toFixed(2);
  }

  // The x range of the data itself, padded by a little and at least ``least`` wide: uPlot
  // widens the range of one point by far more (years of time, or a whole range of numbers).
  function span(xs, least) {
    var min = xs[0], max = xs[xs.length - 1];
    var pad = Math.max((max - min) * 0.03, (least - (max - min)) / 2);
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
        value: twoPlaces
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

  // The x range shown, for people reading the page's source and for its tests.
  function recordRange(figure) {
    return [function (u, key) {
      if (key === "x") figure.dataset.xRange = u.scales.x.min + "," + u.scales.x.max;
    }];
  }

  function drawOverTime(figure, data) {
    var few = data.x.length < 60;
    var last = data.x[data.x.length - 1];
    var series = [{
      label: "after match at",
      value: function (u, v, seriesIdx, idx) {
        return idx == null ? formatTime(last) + " (latest)" : formatTime(v);
      }
    }].concat(lines(data, PALETTE, { spanGaps: true, points: { show: few } }));
    plot(figure, data, {
      series: series,
      // At least ten minutes: a few minutes of play read as minutes, not as an evening.
      scales: { x: { time: true, auto: false, range: span(data.x, 600) } },
      axes: [{}, { label: figure.dataset.yLabel, size: 60 }],
      legend: { live: true },
      hooks: { setScale: recordRange(figure) }
    }, HEIGHT);
  }

  function drawBand(figure, data) {
    var few = data.x.length < 60;
    var last = data.x[data.x.length - 1];
    var blue = PALETTE[0];
    var series = [
      {
        label: "after match",
        value: function (u, v, seriesIdx, idx) {
          return idx == null ? last + " (latest)" : String(v);
        }
      },
      { label: data.series[0].label, stroke: "rgba(37, 99, 235, 0.35)", width: 1, value: twoPlaces },
      { label: data.series[1].label, stroke: blue, width: 2, value: twoPlaces, points: { show: few } },
      { label: data.series[2].label, stroke: "#1e3a8a", width: 1.5, dash: [6, 4], value: twoPlaces }
    ];
    plot(figure, data, {
      series: series,
      // The uncertainty: from the rating (mu - 3 sigma) up to mu + 3 sigma.
      bands: [{ series: [1, 2], fill: "rgba(37, 99, 235, 0.12)" }],
      scales: { x: { time: false, auto: false, range: span(data.x, 1) } },
      axes: [
        {
          label: "rated matches",
          incrs: WHOLE_STEPS,
          values: function (u, ticks) { return ticks.map(String); }
        },
        { label: figure.dataset.yLabel, size: 60 }
      ],
      legend: { live: true },
      hooks: { setScale: recordRange(figure) }
    }, HEIGHT);
  }

  document.querySelectorAll("figure[data-chart]").forEach(function (figure) {
    var data = JSON.parse(document.getElementById(figure.dataset.chart).textContent);
    (data.band ? drawBand : drawOverTime)(figure, data);
  });
})();
