// Drillbook's page behaviour: the Run button gate, and plotly charts that grow as points stream in.
(function () {
  "use strict";

  // -- Run stays disabled until a hypothesis is picked and a prediction written ---------------
  function updateRunButton() {
    const form = document.getElementById("attempt-form");
    if (!form) return;
    const button = form.querySelector("#run-button");
    const picked = form.querySelector('input[name="hypothesis"]:checked');
    const text = form.querySelector('textarea[name="prediction"]');
    const ready = Boolean(picked) && text && text.value.trim().length > 0;
    button.disabled = !ready;
    const hint = form.querySelector("#run-hint");
    if (hint) hint.hidden = ready;
  }
  document.addEventListener("input", updateRunButton);
  document.addEventListener("change", updateRunButton);

  // -- Charts --------------------------------------------------------------------------------
  const COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"];

  function traceFor(metric, points, index) {
    return {
      name: metric,
      mode: "lines",
      line: { width: 2, color: COLORS[index % COLORS.length] },
      x: points.map((p) => p[0]),
      y: points.map((p) => p[1]),
    };
  }

  function drawChart(figure) {
    if (figure.dataset.drawn) return;
    const spec = JSON.parse(figure.dataset.chart);
    const series = JSON.parse(figure.dataset.series || "{}");
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    const traces = spec.metrics.map((m, i) => traceFor(m, series[m] || [], i));
    const layout = {
      margin: { l: 56, r: 16, t: 8, b: 40 },
      height: 240,
      showlegend: spec.metrics.length > 1,
      legend: { orientation: "h" },
      xaxis: { title: { text: "step" } },
      yaxis: { title: { text: spec.y_label }, type: spec.log_y ? "log" : "linear" },
    };
    Plotly.newPlot(plot, traces, layout, { displayModeBar: false, responsive: true });
    figure.dataset.drawn = "1";
    figure.dataset.points = String(traces.reduce((n, t) => n + t.x.length, 0));
  }

  function drawCharts(root) {
    root.querySelectorAll("figure.chart").forEach(drawChart);
  }

  // A "points" event carries [[metric, step, value], ...]; append each to the chart plotting it.
  function extendCharts(container, points) {
    container.querySelectorAll("figure.chart").forEach((figure) => {
      const spec = JSON.parse(figure.dataset.chart);
      const plot = figure.querySelector(".plot");
      if (!plot) return;
      const xs = spec.metrics.map(() => []);
      const ys = spec.metrics.map(() => []);
      points.forEach(([metric, step, value]) => {
        const i = spec.metrics.indexOf(metric);
        if (i >= 0) {
          xs[i].push(step);
          ys[i].push(value);
        }
      });
      const added = xs.reduce((n, x) => n + x.length, 0);
      if (added === 0) return;
      Plotly.extendTraces(plot, { x: xs, y: ys }, spec.metrics.map((_, i) => i));
      figure.dataset.points = String(Number(figure.dataset.points || 0) + added);
    });
  }

  document.addEventListener("htmx:sseMessage", (event) => {
    const message = event.detail;
    if (!message || message.type !== "points") return;
    const container = event.target.closest(".charts");
    if (container) extendCharts(container, JSON.parse(message.data).points);
  });

  document.addEventListener("htmx:load", (event) => {
    drawCharts(event.target);
    updateRunButton();
  });
  document.addEventListener("DOMContentLoaded", () => {
    drawCharts(document);
    updateRunButton();
  });
})();
