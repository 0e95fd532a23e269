"""Static SVG heat maps for the exported portfolio: one row per series (a layer), steps across,
the value as colour (log10 when the chart is log-y). A value of exactly 0 has no logarithm and
is left grey, as on the live page: that grey is what the chart is there to show."""

import math
from typing import Any

from markupsafe import Markup, escape

WIDTH, ROW, LEFT, RIGHT, TOP, BOTTOM = 560, 18, 140, 12, 8, 44
EMPTY = "#d1d5db"
# Five stops of a perceptually even blue-to-yellow ramp (low to high).
RAMP = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))

Series = dict[str, list[list[Any]]]


def _colour(fraction: float) -> str:
    position = min(max(fraction, 0.0), 1.0) * (len(RAMP) - 1)
    low = int(position)
    high = min(low + 1, len(RAMP) - 1)
    mix = position - low
    red, green, blue = (
        round(a + (b - a) * mix) for a, b in zip(RAMP[low], RAMP[high], strict=True)
    )
    return f"#{red:02x}{green:02x}{blue:02x}"


def heatmap_svg(
    chart: dict[str, Any], series: Series, names: list[str], labels: list[str]
) -> Markup:
    log_y = bool(chart.get("log_y"))

    def level(value: Any) -> float | None:
        if not isinstance(value, int | float) or not math.isfinite(value):
            return None
        if log_y:
            return math.log10(value) if value > 0 else None
        return float(value)

    cells = {
        name: [(int(step), level(value)) for step, value in series.get(name, [])] for name in names
    }
    steps = sorted({step for row in cells.values() for step, _ in row})
    levels = [v for row in cells.values() for _, v in row if v is not None]
    height = TOP + ROW * len(names) + BOTTOM
    title = escape(chart["title"])
    parts = [
        f'<svg class="chart heatmap" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-label="{title}"><title>{title}</title>',
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{ROW * len(names)}" '
        f'fill="{EMPTY}"/>',
    ]
    if not steps:
        parts.append(
            f'<text x="{WIDTH / 2}" y="{TOP + 12}" text-anchor="middle" fill="#6b7280">'
            "no points recorded</text></svg>"
        )
        return Markup("".join(parts))  # noqa: S704  (every text above is escaped)
    low, high = (min(levels), max(levels)) if levels else (0.0, 1.0)
    span = high - low or 1.0
    column = {step: index for index, step in enumerate(steps)}
    cell_w = (WIDTH - LEFT - RIGHT) / len(steps)
    for row_index, name in enumerate(names):
        y = TOP + ROW * row_index
        parts.append(
            f'<text x="{LEFT - 6}" y="{y + ROW - 5}" text-anchor="end" font-size="10">'
            f"{escape(labels[row_index])}</text>"
        )
        for step, value in cells[name]:
            if value is None:
                continue
            x = LEFT + column[step] * cell_w
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{cell_w + 0.3:.2f}" height="{ROW - 1}" '
                f'fill="{_colour((value - low) / span)}"/>'
            )
    unit = f"log10 {chart.get('y_label', '')}" if log_y else str(chart.get("y_label", ""))
    bottom = TOP + ROW * len(names)
    parts.append(
        f'<text x="{LEFT}" y="{bottom + 14}" font-size="10">step {steps[0]}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{bottom + 14}" text-anchor="end" font-size="10">'
        f"step {steps[-1]}</text>"
        f'<text x="{LEFT}" y="{bottom + 32}" font-size="10">colour: {escape(unit)} from '
        f"{low:.3g} (dark) to {high:.3g} (light); grey: no value or exactly 0</text></svg>"
    )
    return Markup("".join(parts))  # noqa: S704  (every text above is escaped)
