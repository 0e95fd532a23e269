"""Static SVG line charts, drawn on the server, for pages that must open with no script at all.

A deliberately small replacement for the plotly charts of the live pages: one polyline per
metric, axes with a few ticks, a legend, log-y where the drill's chart asks for it. Every text in
the SVG (titles, labels, metric names) is escaped.
"""

import math
from typing import Any

from markupsafe import Markup, escape

from app.portfolio.heatmap import heatmap_svg
from app.portfolio.ticks import x_ticks, y_ticks

WIDTH, HEIGHT = 560, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 12, 40
LEGEND_ROW = 16
COLORS = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2")

Series = dict[str, list[list[Any]]]


def chart_metrics(chart: dict[str, Any], series: Series) -> list[str]:
    """The metric names a chart plots, as the live page does: exact names always, a "prefix*"
    pattern as every series whose name starts with the prefix, in order of appearance."""
    names: list[str] = []
    for pattern in chart["metrics"]:
        if not pattern.endswith("*"):
            names.append(pattern)
            continue
        names += [n for n in series if n.startswith(pattern[:-1]) and n not in names]
    return names


def legend_name(chart: dict[str, Any], name: str) -> str:
    for pattern in chart["metrics"]:
        if pattern.endswith("*") and name.startswith(pattern[:-1]):
            return name[len(pattern) - 1 :]
    return name


def _plottable(points: list[list[Any]], log_y: bool) -> list[tuple[float, float] | None]:
    """(step, y) per point, None where the line must break (non-finite, or <= 0 on a log axis)."""
    out: list[tuple[float, float] | None] = []
    for step, value in points:
        finite = isinstance(value, int | float) and math.isfinite(value)
        if not finite or (log_y and value <= 0):
            out.append(None)
        else:
            out.append((float(step), math.log10(value) if log_y else float(value)))
    return out


def _span(values: list[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if low == high:  # a flat line still needs a visible axis
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    return low, high


def chart_svg(
    chart: dict[str, Any], series: Series, references: list[dict[str, Any]] | None = None
) -> Markup:
    """`references`: constant lines [{"label", "value"}] drawn dotted across the plot."""
    log_y = bool(chart.get("log_y"))
    names = chart_metrics(chart, series)
    if chart.get("kind") == "heatmap":
        rows = [name for name in names if name in series]
        return heatmap_svg(chart, series, rows, [legend_name(chart, name) for name in rows])
    lines = {name: _plottable(series.get(name, []), log_y) for name in names}
    drawn = [p for points in lines.values() for p in points if p is not None]
    levels = [
        (str(line["label"]), math.log10(line["value"]) if log_y else float(line["value"]))
        for line in references or []
        if not log_y or line["value"] > 0
    ]
    height = HEIGHT + LEGEND_ROW * (len(names) if len(names) > 1 else 0)
    title = escape(chart["title"])
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}" fill="none" stroke="#9ca3af"/>',
    ]
    if not drawn:
        parts.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" fill="#6b7280">'
            "no points recorded</text></svg>"
        )
        return Markup("".join(parts))  # noqa: S704  (every text above is escaped)
    x_low, x_high = _span([p[0] for p in drawn])
    y_low, y_high = _span([p[1] for p in drawn] + [level for _, level in levels])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(step: float) -> float:
        return LEFT + (step - x_low) / (x_high - x_low) * plot_w

    def y_of(value: float) -> float:
        return TOP + (1 - (value - y_low) / (y_high - y_low)) * plot_h

    for tick, label in y_ticks(y_low, y_high, log_y):
        y = y_of(tick)
        parts.append(
            f'<line x1="{LEFT - 4}" x2="{LEFT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#6b7280"/>'
            f'<text class="y-tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" '
            f'font-size="10">{escape(label)}</text>'
        )
    for tick, label in x_ticks(x_low, x_high):
        parts.append(
            f'<text class="x-tick" x="{x_of(tick):.1f}" y="{HEIGHT - BOTTOM + 14}" '
            f'text-anchor="middle" font-size="10">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle" font-size="11">'
        f"{escape(chart.get('x_label', 'step'))}</text>"
        f'<text x="12" y="{TOP + plot_h / 2}" text-anchor="middle" font-size="11" '
        f'transform="rotate(-90 12 {TOP + plot_h / 2})">'
        f"{escape(chart.get('y_label', ''))}{' (log)' if log_y else ''}</text>"
    )
    for label, level in levels:
        y = y_of(level)
        parts.append(
            f'<line class="reference" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#6b7280" stroke-dasharray="3 3"/>'
            f'<text x="{WIDTH - RIGHT - 4}" y="{y - 3:.1f}" text-anchor="end" font-size="10" '
            f'fill="#4b5563">{escape(label)}</text>'
        )
    for index, name in enumerate(names):
        color = COLORS[index % len(COLORS)]
        path = _path(lines[name], x_of, y_of)
        if path:
            parts.append(
                f'<path class="trace" d="{path}" fill="none" stroke="{color}" stroke-width="2">'
                f"<title>{escape(name)}</title></path>"
            )
        if len(names) > 1:
            y = HEIGHT + LEGEND_ROW * index
            parts.append(
                f'<rect x="{LEFT}" y="{y - 8}" width="12" height="3" fill="{color}"/>'
                f'<text x="{LEFT + 18}" y="{y}" font-size="11">'
                f"{escape(legend_name(chart, name))}</text>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704  (every text above is escaped)


def _path(points: list[tuple[float, float] | None], x_of: Any, y_of: Any) -> str:
    """SVG path data; a None point ends the current segment, so gaps stay gaps."""
    commands: list[str] = []
    pen_down = False
    for point in points:
        if point is None:
            pen_down = False
            continue
        commands.append(f"{'L' if pen_down else 'M'}{x_of(point[0]):.1f},{y_of(point[1]):.1f}")
        pen_down = True
    return " ".join(commands)
