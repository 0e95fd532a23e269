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

  // -- A tab looked at again refreshes its list of runs (one started in another tab shows) ----
  document.addEventListener("visibilitychange", () => {
    const history = document.getElementById("attempt-history");
    if (document.visibilityState === "visible" && history && window.htmx) {
      window.htmx.trigger(history, "refresh");
    }
  });

  // -- "Hide the bug from me": the learner's own setup is set aside (and not sent) ------------
  function updateOwnSetup() {
    const hide = document.getElementById("hidden-setup");
    const own = document.getElementById("own-setup");
    if (hide && own) own.disabled = hide.checked;
  }
  document.addEventListener("change", (event) => {
    if (event.target && event.target.id === "hidden-setup") updateOwnSetup();
  });

  // -- A saved review comment chosen goes into the comment box at once -----------------------
  // Without this script the server appends it when the review is sent
  // (app/grading/saved_comments.py); here the reviewer sees and edits it first, and the select
  // goes back to "None" so that the server does not append it a second time.
  document.addEventListener("change", (event) => {
    const select = event.target;
    if (!select || !select.matches || !select.matches("select[data-append-to]")) return;
    const option = select.selectedOptions[0];
    const box = document.getElementById(select.dataset.appendTo);
    if (!option || !option.value || !box) return;
    const text = option.dataset.text || "";
    box.value = box.value.trim() ? box.value.replace(/\s+$/, "") + "\n\n" + text : text;
    select.value = "";
    box.focus();
  });

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
    const opacity = compared ? 0.6 : 1;
    return {
      name: run ? run.label + " " + legendName(spec, metric) : legendName(spec, metric),
      mode: "lines",
      legendrank: compared ? 2000 : 1000,
      opacity: opacity,
      // Its own opacity, kept: smoothing fades the trace and gives it back (drawSmoothing).
      meta: { opacity: opacity },
      line: run
        ? { width: compared ? 1.5 : 2, color: COLORS[run.index % COLORS.length],
            dash: DASHES[slot % DASHES.length] }
        // Dashes too, so that identical curves (three losses that agree) stay visible.
        : { width: 2, color: COLORS[slot % COLORS.length], dash: DASHES[slot % DASHES.length] },
      x: points.map((p) => p[0]),
      y: points.map((p) => p[1]),
    };
  }

  // A series of one point (a run that ended at its first step) has no line to draw: mark it.
  function markLonePoints(traces) {
    traces.forEach((trace) => {
      if (trace.y.filter((v) => v !== null).length === 1) trace.mode = "lines+markers";
    });
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
      // A slim bar with its title along it: the plot keeps the width (at 390 px a title set
      // across the bar took most of it, and was cut off).
      colorbar: {
        thickness: 10, xpad: 4, outlinewidth: 0,
        title: { text: spec.log_y ? "log10 " + spec.y_label : spec.y_label, side: "right" },
      },
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
      margin: { l: 8, r: 8, t: 8, b: 40 }, height: heatmapHeight(names.length),
      plot_bgcolor: "#d1d5db",
      xaxis: { ...AXIS, title: { text: spec.x_label || "step" } }, yaxis: { automargin: true },
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
    markLonePoints(traces);
    // Constant reference lines (a theoretical level from this run's signature): dotted, labelled.
    const references = JSON.parse(figure.dataset.references || "[]");
    figure.view = {
      spec: spec, references: references, log: Boolean(spec.log_y), all: false, smoothing: 0,
    };
    const plot = document.createElement("div");
    plot.className = "plot";
    figure.appendChild(plot);
    const layout = {
      shapes: references.map((r) => ({
        type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: r.value, y1: r.value,
        line: { dash: "dot", width: 1.5, color: "#6b7280" },
      })),
      margin: { l: 56, r: 16, t: 8, b: 40 },
      // The legend sits above the plot: a long one adds height instead of squeezing the curves.
      height: HEIGHT + (traces.length > 1 ? 20 * Math.ceil(traces.length / 2) : 0),
      showlegend: traces.length > 1 || spec.metrics.some((p) => p.endsWith("*")),
      // Above the plot area, clear of the axis titles.
      legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" },
      xaxis: { ...AXIS, title: { text: spec.x_label || "step" } },
      ...yView(figure, traces),
    };
    // Zoom by dragging, reset by double-click; the same (and the log axis) from the buttons.
    Plotly.newPlot(plot, traces, layout, { displayModeBar: false, responsive: true });
    figure.insertBefore(chartTools(figure, plot), plot);
    if (!live) noteLonePoints(figure, traces.slice(offset));
    figure.traceNames = names;
    figure.traceOffset = offset;
    figure.mainRun = main;
    figure.dataset.drawn = "1";
    figure.dataset.traces = String(traces.length);
    figure.dataset.points = String(traces.slice(offset).reduce((n, t) => n + t.x.length, 0));
  }

  // -- The y axis: clipped past a runaway trace, log ticks at whole decades -----------------
  // A trace whose peak is far above every other (a learning rate that overflows to 1e+36) would
  // flatten the rest onto one line. The axis is clipped to the range of the others instead, and
  // the runaway is named as leaving the chart; "Show all" draws the whole range. Clipping rather
  // than a symmetric log: every curve keeps an ordinary axis whose numbers read as they are
  // (hover shows the true values), and the one that left is said in words, not squeezed.
  const RUNAWAY_FACTOR = { log: 1e3, linear: 10 };

  function finiteYs(trace, log) {
    return trace.y.filter((v) => v !== null && Number.isFinite(v) && (!log || v > 0));
  }

  function peakOf(values) {
    return values.reduce((m, v) => Math.max(m, v), -Infinity);
  }

  // {kept: [traces], runaways: [traces]}, or null when no trace runs away from the others.
  function runaways(traces, log) {
    const peaks = traces
      .map((trace) => ({ trace: trace, peak: peakOf(finiteYs(trace, log)) }))
      .filter((p) => Number.isFinite(p.peak))
      .sort((a, b) => a.peak - b.peak);
    const factor = log ? RUNAWAY_FACTOR.log : RUNAWAY_FACTOR.linear;
    for (let k = 1; k < peaks.length; k += 1) {
      const below = peaks[k - 1].peak;
      if (below > 0 && peaks[k].peak > factor * below) {
        return { kept: peaks.slice(0, k).map((p) => p.trace), runaways: peaks.slice(k) };
      }
    }
    return null;
  }

  function yRange(values, log) {
    const lo = values.reduce((m, v) => Math.min(m, v), Infinity);
    const hi = peakOf(values);
    if (log) {
      const a = Math.log10(lo);
      const b = Math.log10(hi);
      const pad = Math.max(0.1 * (b - a), 0.2);
      return [a - pad, b + pad];
    }
    const pad = Math.max(0.08 * (hi - lo), Math.abs(hi) * 0.05, 1e-9);
    return [lo - pad, hi + pad];
  }

  // Log ticks: whole decades when the range spans two or more (plotly otherwise labels the
  // minor ticks "9 8 7 ... 2"), else a few round values (1, 2, 5 times a power of ten).
  function logTicks(range) {
    const span = range[1] - range[0];
    if (span >= 2) return { tickmode: "linear", tick0: 0, dtick: Math.max(1, Math.ceil(span / 8)) };
    const mantissas = span < 0.7 ? [1, 2, 3, 5, 7] : [1, 2, 5];
    const values = [];
    for (let e = Math.floor(range[0]) - 1; e <= Math.ceil(range[1]); e += 1) {
      mantissas.forEach((m) => {
        const v = m * 10 ** e;
        if (Math.log10(v) >= range[0] && Math.log10(v) <= range[1]) values.push(v);
      });
    }
    return {
      tickmode: "array", tickvals: values,
      ticktext: values.map((v) => String(Number(v.toPrecision(2)))),
    };
  }

  function exponent(value) {
    return Math.abs(value) >= 1e4 || (value !== 0 && Math.abs(value) < 1e-3)
      ? value.toExponential(0)
      : String(Number(value.toPrecision(3)));
  }

  // The y axis, reference labels and runaway notes for the figure's view ({log, all}).
  function yView(figure, traces) {
    const view = figure.view;
    const spec = view.spec;
    const log = view.log;
    const away = view.all ? null : runaways(traces, log);
    const shown = away ? away.kept : traces;
    const values = shown.flatMap((t) => finiteYs(t, log));
    const yaxis = { ...AXIS, title: { text: spec.y_label }, type: log ? "log" : "linear" };
    if (away && values.length) {
      yaxis.range = yRange(values, log);
      yaxis.autorange = false;
    } else {
      yaxis.autorange = true;
    }
    const all = traces.flatMap((t) => finiteYs(t, log));
    if (log && all.length) Object.assign(yaxis, logTicks(yaxis.range || yRange(all, log)));
    const annotations = view.references.map((r) => ({
      // On a log axis, annotations (unlike shapes) are placed in log10 units.
      xref: "paper", x: 1, xanchor: "right", yref: "y",
      y: log ? Math.log10(r.value) : r.value, yanchor: "bottom",
      text: r.label, showarrow: false, font: { size: 11, color: "#4b5563" },
    }));
    const notes = [];
    (away ? away.runaways : []).forEach(({ trace, peak }, i) => {
      const top = yaxis.range[1];
      const over = trace.y.findIndex((v) => v !== null && (log ? Math.log10(v) : v) > top);
      annotations.push({
        xref: "x", x: trace.x[over >= 0 ? over : trace.x.length - 1], xanchor: "left",
        yref: "paper", y: 1 - 0.07 * i, yanchor: "top", showarrow: false,
        text: "↑ " + trace.name + " leaves the chart (up to " + exponent(peak) + ")",
        font: { size: 11, color: trace.line.color },
      });
      notes.push(trace.name + " rises past the top of the chart, up to " + exponent(peak));
    });
    figure.dataset.clipped = away ? "1" : "";
    setNote(figure, "chart-clip-note", notes.length
      ? notes.join("; ") + ": the axis shows the range of the other runs. “Show all” draws everything."
      : "");
    const tools = figure.querySelector(".chart-tools .show-all");
    if (tools) tools.hidden = !away && !view.all;
    return { yaxis: yaxis, annotations: annotations };
  }

  function setNote(figure, className, text) {
    let note = figure.querySelector("." + className);
    if (!text) {
      if (note) note.remove();
      return;
    }
    if (!note) {
      note = document.createElement("p");
      note.className = "chart-note " + className;
      figure.appendChild(note);
    }
    note.textContent = text;
  }

  // A finished run whose series hold one point each (it ended at its first step): the point is
  // marked, and the chart says why there is no curve.
  function noteLonePoints(figure, traces) {
    const counts = traces.map((t) => t.y.filter((v) => v !== null).length);
    if (!counts.length || Math.max(...counts) !== 1) return;
    const step = traces.find((t, i) => counts[i] === 1).x[0];
    setNote(figure, "chart-lone-note", "Only one point was recorded, at step " + step +
      ": the run ended there, so there is no curve, only the marked point.");
  }

  // -- Zoom, reset and a log axis from buttons (plotly's mode bar is not reachable by keyboard)
  function toolButton(label, className, onPress) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "chart-tool " + className;
    button.textContent = label;
    button.addEventListener("click", onPress);
    return button;
  }

  function restyleY(figure, plot) {
    Plotly.relayout(plot, yView(figure, rawTraces(plot)));
  }

  // -- Smoothing: an exponential moving average of each trace, as W&B and TensorBoard draw it
  // Noise hides a trend, and two runs that differ by a little read apart once smoothed. The raw
  // trace stays behind its smoothed one, faint, so that a spike is never smoothed out of sight
  // (and hover still reads the true values). Debiased like TensorBoard's (divided by 1 - w^n):
  // the first steps are not pulled towards zero. A gap (a NaN or inf step) stays a gap.
  const FAINT = 0.25;

  function ema(values, weight) {
    let last = 0;
    let count = 0;
    return values.map((v) => {
      if (v === null || !Number.isFinite(v)) return null;
      last = last * weight + (1 - weight) * v;
      count += 1;
      return last / (1 - weight ** count);
    });
  }

  const isSmoothed = (trace) => Boolean(trace.meta && trace.meta.smoothed);

  // The traces of the data itself: the smoothed ones come after them, and are redrawn from them.
  function rawTraces(plot) {
    return plot.data.filter((trace) => !isSmoothed(trace));
  }

  // In the raw trace's colour, dash and place in the legend, which it takes over: one legend
  // entry per curve, and clicking it hides both (one legend group).
  function smoothedTrace(raw, weight) {
    return {
      name: raw.name, mode: raw.mode, legendrank: raw.legendrank, legendgroup: raw.legendgroup,
      opacity: raw.meta.opacity, line: { ...raw.line },
      x: raw.x.slice(), y: ema(raw.y, weight), meta: { smoothed: true },
    };
  }

  function drawSmoothing(figure, plot) {
    const weight = figure.view.smoothing;
    const raw = rawTraces(plot);
    raw.forEach((trace, i) => {
      trace.legendgroup = "trace-" + i;
      trace.showlegend = weight === 0;
      trace.opacity = weight > 0 ? FAINT * trace.meta.opacity : trace.meta.opacity;
    });
    const smoothed = weight > 0 ? raw.map((trace) => smoothedTrace(trace, weight)) : [];
    Plotly.react(plot, raw.concat(smoothed), plot.layout);
    figure.dataset.smoothing = String(weight);
  }

  // A range 0-0.99 like W&B's, 0 (off) at first; a native slider, so the arrow, Page and
  // Home/End keys move it, and its label names it.
  function smoothingControl(figure, plot) {
    const id = (figure.id || "chart") + "-smoothing";
    const group = document.createElement("span");
    group.className = "chart-smoothing";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Smoothing";
    const input = document.createElement("input");
    Object.assign(input, { type: "range", id: id, min: "0", max: "0.99", step: "0.01", value: "0" });
    input.className = "smoothing";
    input.setAttribute("aria-valuetext", "off");
    const shown = document.createElement("output");
    shown.htmlFor = id;
    shown.textContent = "off";
    input.addEventListener("input", () => {
      figure.view.smoothing = Number(input.value);
      shown.textContent = figure.view.smoothing > 0 ? figure.view.smoothing.toFixed(2) : "off";
      input.setAttribute("aria-valuetext", shown.textContent);
      drawSmoothing(figure, plot);
    });
    group.append(label, input, shown);
    return group;
  }

  function chartTools(figure, plot) {
    const bar = document.createElement("div");
    bar.className = "chart-tools";
    bar.setAttribute("role", "toolbar");
    bar.setAttribute("aria-label", figure.querySelector("figcaption").textContent + ": view");
    const zoom = toolButton("Zoom in", "zoom-in", () => {
      const range = plot.layout.xaxis.range;
      if (!range) return;
      const quarter = (range[1] - range[0]) / 4;
      Plotly.relayout(plot, { "xaxis.range": [range[0] + quarter, range[1] - quarter] });
    });
    const reset = toolButton("Reset view", "reset", () => {
      figure.view.log = Boolean(figure.view.spec.log_y);
      figure.view.all = false;
      logButton.setAttribute("aria-pressed", String(figure.view.log));
      allButton.setAttribute("aria-pressed", "false");
      Plotly.relayout(plot, { "xaxis.autorange": true });
      restyleY(figure, plot);
    });
    const logButton = toolButton("Log scale", "log-scale", () => {
      figure.view.log = !figure.view.log;
      logButton.setAttribute("aria-pressed", String(figure.view.log));
      restyleY(figure, plot);
    });
    logButton.setAttribute("aria-pressed", String(figure.view.log));
    const allButton = toolButton("Show all", "show-all", () => {
      figure.view.all = !figure.view.all;
      allButton.setAttribute("aria-pressed", String(figure.view.all));
      restyleY(figure, plot);
    });
    allButton.setAttribute("aria-pressed", "false");
    allButton.hidden = !figure.dataset.clipped;
    [zoom, reset, logButton, allButton].forEach((b) => bar.appendChild(b));
    bar.appendChild(smoothingControl(figure, plot));
    return bar;
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
          // Placed after this run's traces, before any smoothed ones: the indices below hold.
          const trace = traceFor(spec, metric, [], names.length, figure.mainRun);
          Plotly.addTraces(plot, trace, offset + names.length);
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
      // The axis follows what came: a runaway clipped, log ticks at the decades now spanned.
      if (figure.view) restyleY(figure, plot);
      if (figure.view && figure.view.smoothing > 0) drawSmoothing(figure, plot);
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
    updateOwnSetup();
  });
  document.addEventListener("DOMContentLoaded", () => {
    drawCharts(document);
    updateRunButton();
    updateOwnSetup();
  });
})();
