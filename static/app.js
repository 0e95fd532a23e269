// Drillbook's page behaviour: the Run button gate, and plotly charts that grow as points stream in.
(function () {
  "use strict";

  // -- Run stays disabled until a hypothesis is picked and a prediction written ---------------
  function updateRunButton() {
    const form = document.getElementById("attempt-form");
    const button = form && form.querySelector("#run-button");
    if (!button) return; // no form, or a visitor's (which has no Run button)
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

  // A chart metric ending in "*" is a prefix: every series starting with it gets a trace.
  function matches(pattern, name) {
    return pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
  }

  function legendName(spec, name) {
    const prefix = spec.metrics.find((p) => p.endsWith("*") && matches(p, name));
    return prefix ? name.slice(prefix.length - 1) : name;
  }

  function traceFor(spec, metric, points, index) {
    return {
      name: legendName(spec, metric),
      mode: "lines",
      line: { width: 2, color: COLORS[index % COLORS.length] },
      x: points.map((p) => p[0]),
      y: points.map((p) => p[1]),
    };
  }

  // -- Heat maps: one row per series (a layer), steps across, colour = log10 of the value ----
  // A value of exactly 0 (no gradient, no update) has no logarithm: it is left empty and shows
  // the grey background, which is the point of the chart (a line chart would draw nothing).
  function heatmapTrace(spec, names, series) {
    const steps = [...new Set(names.flatMap((n) => (series[n] || []).map((p) => p[0])))].sort(
      (a, b) => a - b,
    );
    const column = new Map(steps.map((s, i) => [s, i]));
    const z = names.map((n) => {
      const row = steps.map(() => null);
      (series[n] || []).forEach(([step, value]) => {
        const usable = value !== null && (!spec.log_y || value > 0);
        row[column.get(step)] = usable ? (spec.log_y ? Math.log10(value) : value) : null;
      });
      return row;
    });
    return {
      type: "heatmap", x: steps, y: names.map((n) => legendName(spec, n)), z: z,
      colorscale: "Viridis", hoverongaps: false,
      colorbar: { title: { text: spec.log_y ? "log10 " + spec.y_label : spec.y_label } },
    };
  }

  function drawHeatmap(figure, spec, series) {
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    figure.heat = { series: series };
    const names = Object.keys(series).filter((n) => spec.metrics.some((p) => matches(p, n)));
    const layout = {
      margin: { l: 110, r: 16, t: 8, b: 40 }, height: 240, plot_bgcolor: "#d1d5db",
      xaxis: { title: { text: "step" } }, yaxis: { automargin: true },
    };
    Plotly.newPlot(plot, [heatmapTrace(spec, names, series)], layout, {
      displayModeBar: false, responsive: true,
    });
    figure.dataset.drawn = "1";
  }

  function extendHeatmap(figure, spec, points) {
    const series = figure.heat.series;
    let added = 0;
    points.forEach(([metric, step, value]) => {
      if (!spec.metrics.some((p) => matches(p, metric))) return;
      (series[metric] = series[metric] || []).push([step, value]);
      added += 1;
    });
    if (added === 0) return;
    const names = Object.keys(series).filter((n) => spec.metrics.some((p) => matches(p, n)));
    const plot = figure.querySelector(".plot");
    Plotly.react(plot, [heatmapTrace(spec, names, series)], plot.layout);
  }

  function drawChart(figure) {
    if (figure.dataset.drawn) return;
    const spec = JSON.parse(figure.dataset.chart);
    const series = JSON.parse(figure.dataset.series || "{}");
    if (spec.kind === "heatmap") return drawHeatmap(figure, spec, series);
    const available = Object.keys(series);
    // Exact metrics always get a trace (so a live chart can grow); prefixes only once seen.
    const names = [];
    spec.metrics.forEach((pattern) => {
      if (!pattern.endsWith("*")) names.push(pattern);
      else available.filter((n) => matches(pattern, n) && !names.includes(n)).forEach((n) => names.push(n));
    });
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    const traces = names.map((m, i) => traceFor(spec, m, series[m] || [], i));
    // Constant reference lines (a theoretical level from this run's signature): dotted, labelled.
    const references = JSON.parse(figure.dataset.references || "[]");
    const layout = {
      shapes: references.map((r) => ({
        type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: r.value, y1: r.value,
        line: { dash: "dot", width: 1.5, color: "#6b7280" },
      })),
      annotations: references.map((r) => ({
        // On a log axis, annotations (unlike shapes) are placed in log10 units.
        xref: "paper", x: 1, xanchor: "right", yref: "y",
        y: spec.log_y ? Math.log10(r.value) : r.value, yanchor: "bottom",
        text: r.label, showarrow: false, font: { size: 11, color: "#4b5563" },
      })),
      margin: { l: 56, r: 16, t: 8, b: 40 },
      height: 240,
      showlegend: names.length > 1 || spec.metrics.some((p) => p.endsWith("*")),
      legend: { orientation: "h" },
      xaxis: { title: { text: "step" } },
      yaxis: { title: { text: spec.y_label }, type: spec.log_y ? "log" : "linear" },
    };
    Plotly.newPlot(plot, traces, layout, { displayModeBar: false, responsive: true });
    figure.traceNames = names;
    figure.dataset.drawn = "1";
    figure.dataset.points = String(traces.reduce((n, t) => n + t.x.length, 0));
  }

  // Only pages that draw charts load plotly.js; elsewhere there is nothing to draw.
  const chartsAvailable = () => typeof window.Plotly !== "undefined";

  function drawCharts(root) {
    if (!chartsAvailable()) return;
    root.querySelectorAll("figure.chart").forEach(drawChart);
  }

  // A "points" event carries [[metric, step, value], ...]; append each to the chart plotting it.
  function extendCharts(container, points) {
    if (!chartsAvailable()) return;
    container.querySelectorAll("figure.chart").forEach((figure) => {
      const spec = JSON.parse(figure.dataset.chart);
      if (spec.kind === "heatmap") {
        if (figure.heat) extendHeatmap(figure, spec, points);
        return;
      }
      const plot = figure.querySelector(".plot");
      if (!plot || !figure.traceNames) return;
      const names = figure.traceNames;
      points.forEach(([metric]) => {
        if (!names.includes(metric) && spec.metrics.some((p) => matches(p, metric))) {
          Plotly.addTraces(plot, traceFor(spec, metric, [], names.length));
          names.push(metric);
        }
      });
      const xs = names.map(() => []);
      const ys = names.map(() => []);
      points.forEach(([metric, step, value]) => {
        const i = names.indexOf(metric);
        if (i >= 0) {
          xs[i].push(step);
          ys[i].push(value);
        }
      });
      const added = xs.reduce((n, x) => n + x.length, 0);
      if (added === 0) return;
      Plotly.extendTraces(plot, { x: xs, y: ys }, names.map((_, i) => i));
      figure.dataset.points = String(Number(figure.dataset.points || 0) + added);
    });
  }

  document.addEventListener("htmx:sseMessage", (event) => {
    const message = event.detail;
    if (!message || message.type !== "points") return;
    const container = event.target.closest(".charts");
    if (container) extendCharts(container, JSON.parse(message.data).points);
  });

  // -- A form sent back with errors: focus its first invalid field, scrolled into view ------
  // (the server marks each with aria-invalid; templates/macros/fields.html). A full page
  // answer and an htmx swap alike land on the error instead of the top of the page.
  function focusFirstInvalid(root) {
    const field = root.matches && root.matches('[aria-invalid="true"]')
      ? root
      : root.querySelector('[aria-invalid="true"]');
    if (!field) return;
    field.scrollIntoView({ block: "center" });
    field.focus({ preventScroll: true });
  }
  // htmx:load fires on each piece of content a swap brought in (and on the body at start).
  document.addEventListener("htmx:load", (event) => focusFirstInvalid(event.target));
  document.addEventListener("DOMContentLoaded", () => focusFirstInvalid(document));

  document.addEventListener("htmx:load", (event) => {
    drawCharts(event.target);
    updateRunButton();
  });
  document.addEventListener("DOMContentLoaded", () => {
    drawCharts(document);
    updateRunButton();
  });
})();
