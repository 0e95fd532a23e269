"""Every trace a drill's charts draw is named in words: the chart's labels cover each series a
real run reports, and no name is a raw snake_case metric key."""

import re

import pytest

from drills.core.contract import Chart, series_label
from drills.core.registry import all_drills
from tests.drills.runs import run_drill

SNAKE_CASE = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b")
DRILLS = list(all_drills())


def plotted_by(chart: Chart, metric: str) -> bool:
    return any(
        name == metric or (name.endswith("*") and metric.startswith(name[:-1]))
        for name in chart.metrics
    )


def test_a_prefix_label_goes_before_the_rest_of_the_name() -> None:
    labels = {"loss@*": "loss at", "update@*": "", "real_token_loss": "loss on real tokens"}
    assert series_label(labels, "loss@lr=0.01") == "loss at lr=0.01"
    assert series_label(labels, "update@head") == "head"
    assert series_label(labels, "real_token_loss") == "loss on real tokens"
    assert series_label(labels, "val") is None


@pytest.mark.parametrize("drill", DRILLS, ids=[drill.slug for drill in DRILLS])
def test_every_metric_a_chart_names_has_a_label(drill: object) -> None:
    for chart in drill.charts:  # type: ignore[attr-defined]
        assert set(chart.labels) == set(chart.metrics), chart.key


@pytest.mark.parametrize("drill", DRILLS, ids=[drill.slug for drill in DRILLS])
def test_the_series_of_a_real_run_are_named_in_words(drill: object) -> None:
    record = run_drill(drill.slug, {}, 0)  # type: ignore[attr-defined]
    seen = 0
    for chart in drill.charts:  # type: ignore[attr-defined]
        for metric in record["metrics"]:
            if not plotted_by(chart, metric):
                continue
            name = series_label(chart.labels, metric)
            assert name, (chart.key, metric)
            assert not SNAKE_CASE.search(name), (chart.key, metric, name)
            seen += 1
    assert seen > 0
