"""The portfolio's SVG axes: every tick label once, and on a log axis each label names the value
drawn at its position (the export once labelled a loss between 1.2 and 3 "1e0" five times)."""

import math
import re

import pytest

from app.portfolio.charts import chart_svg
from app.portfolio.ticks import x_ticks, y_ticks

SPANS = [  # y values of a series, as a run reports them
    [1.2, 3.0, 2.0],  # within one decade: the reported bug
    [1.386, 1.3861],  # a stalled loss
    [2.0, 2.0],  # a flat line
    [0.3, 0.7],
    [1e-6, 1e3],  # many decades
    [1e-30, 1e10],  # too many to label each
    [0.05, 0.2],
]


def labels(svg: str, axis: str) -> list[str]:
    return re.findall(rf'class="{axis}-tick"[^>]*>([^<]*)<', svg)


@pytest.mark.parametrize("values", SPANS)
@pytest.mark.parametrize("log_y", [True, False])
def test_every_tick_label_of_a_chart_is_distinct(values: list[float], log_y: bool) -> None:
    chart = {"key": "g", "title": "G", "metrics": ["g"], "y_label": "norm", "log_y": log_y}
    svg = str(chart_svg(chart, {"g": [[step, v] for step, v in enumerate(values)]}))
    for axis in ("x", "y"):
        found = labels(svg, axis)
        assert len(found) >= 2, (axis, found)
        assert len(set(found)) == len(found), (axis, found)


@pytest.mark.parametrize("values", SPANS)
def test_a_log_tick_names_the_value_at_its_position(values: list[float]) -> None:
    low, high = math.log10(min(values)), math.log10(max(values))
    if low == high:
        low, high = low - 0.05, high + 0.05
    for position, label in y_ticks(low, high, log_y=True):
        assert low <= position <= high
        assert float(label) == pytest.approx(10**position, rel=1e-3), label


def test_decades_are_labelled_once_each_and_thinned_when_many() -> None:
    assert [label for _, label in y_ticks(-2, 1, log_y=True)] == ["1e-2", "1e-1", "1e0", "1e1"]
    many = [label for _, label in y_ticks(-30, 10, log_y=True)]
    assert 2 <= len(many) <= 6 and all(re.fullmatch(r"1e-?\d+", label) for label in many)


def test_steps_are_whole_numbers_once_each() -> None:
    assert x_ticks(0, 1) == [(0.0, "0"), (1.0, "1")]
    assert x_ticks(0, 40) == [(0.0, "0"), (20.0, "20"), (40.0, "40")]
