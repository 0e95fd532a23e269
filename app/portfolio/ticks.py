"""Axis ticks for the portfolio's SVG charts: where they go and what they say.

Every tick label of an axis is different from the others, and on a log axis each label names
the value drawn at its position. Positions on a log axis are in log10 units, as the chart
draws them.
"""

import math

MAX_DECADE_TICKS = 6
EVEN_TICKS = 5
MANTISSAS = (1, 2, 5)

Tick = tuple[float, str]  # (position in axis units, label)


def y_ticks(low: float, high: float, log_y: bool) -> list[Tick]:
    return _log_ticks(low, high) if log_y else _linear_ticks(low, high)


def x_ticks(low: float, high: float) -> list[Tick]:
    """Steps are whole numbers: the first, middle and last whole step of the span, once each."""
    steps = sorted({math.ceil(low), round((low + high) / 2), math.floor(high)})
    inside = [step for step in steps if low <= step <= high]
    return [(float(step), str(step)) for step in inside]


def _log_ticks(low: float, high: float) -> list[Tick]:
    """Each decade once (every n-th when there are many); within less than two decades, the
    1-2-5 steps; within less than one such step, evenly spaced values labelled as numbers."""
    decades = list(range(math.ceil(low), math.floor(high) + 1))
    if len(decades) >= 2:
        stride = math.ceil(len(decades) / MAX_DECADE_TICKS)
        return [(float(decade), f"1e{decade}") for decade in decades[::stride]]
    steps = [
        (math.log10(mantissa) + exponent, f"{mantissa}e{exponent}")
        for exponent in range(math.floor(low), math.ceil(high) + 1)
        for mantissa in MANTISSAS
    ]
    inside = [(position, label) for position, label in steps if low <= position <= high]
    if len(inside) >= 2:
        return inside
    positions = _evenly(low, high)
    return list(zip(positions, _distinct_labels([10**p for p in positions]), strict=True))


def _linear_ticks(low: float, high: float) -> list[Tick]:
    positions = _evenly(low, high)
    return list(zip(positions, _distinct_labels(positions), strict=True))


def _evenly(low: float, high: float) -> list[float]:
    return [low + (high - low) * i / (EVEN_TICKS - 1) for i in range(EVEN_TICKS)]


def _distinct_labels(values: list[float]) -> list[str]:
    """Four significant digits, or as many more as it takes to tell the values apart."""
    for digits in range(4, 16):
        labels = [_number(value, digits) for value in values]
        if len(set(labels)) == len(labels):
            break
    return labels


def _number(value: float, digits: int) -> str:
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}"
