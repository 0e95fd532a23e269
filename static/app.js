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
  // When runs share a chart, colour tells the runs apart and the dash tells the metrics apart.
  const DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"];
  const HEIGHT = 340;
  // One number format on every axis: plotly's default mixes SI suffixes (1µ, 1B) with 10³⁶.
  // "e" (1e-6, 1e+36), not "power": plotly draws a power's superscript with an inline style
  // attribute, which the Content-Security-Policy blocks.
  const AXIS = { exponentformat: "e", automargin: true };

  // A chart metric ending in "*" is a prefix: every series starting with it gets a trace.
  function matches(pattern, name) {
    return pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
  }

  function plots(spec, name) {
    return spec.metrics.some((p) => matches(p, name));
  }

  // The name a legend shows: the chart's label for the metric (drills.core.contract.series_label
  // is the same rule), else the series name with its chart prefix cut off.
  function legendName(spec, name) {
    const labels = spec.labels || {};
    for (const [pattern, label] of Object.entries(labels)) {
      if (pattern === name) return label;
      if (pattern.endsWith("*") && matches(pattern, name)) {
        return (label + " " + name.slice(pattern.length - 1)).trim();
      }
    }
    const prefix = spec.metrics.find((p) => p.endsWith("*") && matches(p, name));
    return prefix ? name.slice(prefix.length - 1) : name;
  }

  // One run's trace of one metric. `run` is {label, index}: index 0 is the run the page is
  // about, drawn solid and on top; the runs it is compared with are lighter.
  function traceFor(spec, metric, points, slot, run) {
    const compared = run && run.index > 0;
    return {
      name: run ? run.label + " " + legendName(spec, metric) : legendName(spec, metric),
      mode: "lines",
      legendrank: compared ? 2000 : 1000,
      opacity: compared ? 0.6 : 1,
      line: run
        ? { width: compared ? 1.5 : 2, color: COLORS[run.index % COLORS.length],
            dash: DASHES[slot % DASHES.length] }
        // Dashes too, so that identical curves (three losses that agree) stay visible.
        : { width: 2, color: COLORS[slot % COLORS.length], dash: DASHES[slot % DASHES.length] },
      x: points.map((p) => p[0]),
      y: points.map((p) => p[1]),
    };
  }

  function pointCount(spec, series) {
    return Object.entries(series)
      .filter(([name]) => plots(spec, name))
      .reduce((n, [, points]) => n + points.length, 0);
  }

  // A finished run that reported nothing for this chart: say so instead of drawing empty axes.
  // A live chart is drawn anyway, so that it can grow when the first points arrive.
  function drawEmpty(figure, spec) {
    const words = spec.metrics.filter((p) => !p.endsWith("*")).map((m) => legendName(spec, m));
    const what = words.length ? words.join(", ") : figure.querySelector("figcaption").textContent;
    const note = document.createElement("p");
    note.className = "chart-empty";
    note.textContent = "No points recorded for " + what + ": the run ended before reporting any.";
    figure.appendChild(note);
    figure.dataset.drawn = "1";
    figure.dataset.points = "0";
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

  // A heat map is as tall as its rows need, not a fixed box.
  function heatmapHeight(rows) {
    return Math.max(160, 70 + 32 * rows);
  }

  function drawHeatmap(figure, spec, series) {
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    figure.heat = { series: series };
    const names = Object.keys(series).filter((n) => plots(spec, n));
    const layout = {
      margin: { l: 110, r: 16, t: 8, b: 40 }, height: heatmapHeight(names.length),
      plot_bgcolor: "#d1d5db",
      xaxis: { ...AXIS, title: { text: "step" } }, yaxis: { automargin: true },
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
      if (!plots(spec, metric)) return;
      (series[metric] = series[metric] || []).push([step, value]);
      added += 1;
    });
    if (added === 0) return;
    const names = Object.keys(series).filter((n) => plots(spec, n));
    const plot = figure.querySelector(".plot");
    const layout = { ...plot.layout, height: heatmapHeight(names.length) };
    Plotly.react(plot, [heatmapTrace(spec, names, series)], layout);
  }

  // The series names of one run this chart draws: exact metrics always (so a live chart can
  // grow) unless `seenOnly`, prefixes only once seen.
  function seriesNames(spec, series, seenOnly) {
    const available = Object.keys(series);
    const names = [];
    spec.metrics.forEach((pattern) => {
      if (!pattern.endsWith("*")) {
        if (!seenOnly || available.includes(pattern)) names.push(pattern);
      } else {
        available.filter((n) => matches(pattern, n) && !names.includes(n)).forEach((n) => names.push(n));
      }
    });
    return names;
  }

  function drawChart(figure) {
    if (figure.dataset.drawn) return;
    const spec = JSON.parse(figure.dataset.chart);
    const series = JSON.parse(figure.dataset.series || "{}");
    if (spec.kind === "heatmap") return drawHeatmap(figure, spec, series);
    // Other runs drawn on the same axes: [{label, series}], e.g. earlier attempts of the drill.
    const others = JSON.parse(figure.dataset.runs || "[]");
    const live = Boolean(figure.closest(".streaming"));
    const total = pointCount(spec, series) + others.reduce((n, r) => n + pointCount(spec, r.series), 0);
    if (!live && total === 0) return drawEmpty(figure, spec);
    const main = others.length ? { label: figure.dataset.label || "this run", index: 0 } : null;
    const traces = [];
    others.forEach((run, i) => {
      const who = { label: run.label, index: i + 1 };
      seriesNames(spec, run.series, true).forEach((m, slot) => {
        traces.push(traceFor(spec, m, run.series[m], slot, who));
      });
    });
    const offset = traces.length;  // this run's traces come last: drawn on top, extended live
    const names = seriesNames(spec, series, false);
    names.forEach((m, slot) => traces.push(traceFor(spec, m, series[m] || [], slot, main)));
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
      // The legend sits above the plot: a long one adds height instead of squeezing the curves.
      height: HEIGHT + (traces.length > 1 ? 20 * Math.ceil(traces.length / 2) : 0),
      showlegend: traces.length > 1 || spec.metrics.some((p) => p.endsWith("*")),
      // Above the plot area, clear of the axis titles.
      legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" },
      xaxis: { ...AXIS, title: { text: "step" } },
      yaxis: { ...AXIS, title: { text: spec.y_label }, type: spec.log_y ? "log" : "linear" },
    };
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    Plotly.newPlot(plot, traces, layout, { displayModeBar: false, responsive: true });
    figure.traceNames = names;
    figure.traceOffset = offset;
    figure.mainRun = main;
    figure.dataset.drawn = "1";
    figure.dataset.traces = String(traces.length);
    figure.dataset.points = String(traces.slice(offset).reduce((n, t) => n + t.x.length, 0));
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
      const offset = figure.traceOffset || 0;
      points.forEach(([metric]) => {
        if (!names.includes(metric) && plots(spec, metric)) {
          Plotly.addTraces(plot, traceFor(spec, metric, [], names.length, figure.mainRun));
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
      Plotly.extendTraces(plot, { x: xs, y: ys }, names.map((_, i) => offset + i));
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
