"""The drill contract, checked over every registered drill: a new drill in drills/catalog/ is
covered here without touching this file."""

import fnmatch
from functools import cache
from typing import Any

import pytest

from drills.core.contract import Drill
from drills.core.knobs import resolve_knobs
from drills.core.registry import all_drills
from tests.drills.runs import run_drill

DRILLS = all_drills()


@cache
def default_run(slug: str) -> dict[str, Any]:
    return run_drill(slug, {}, 0)


def hypothesis_keys(drill: Drill) -> set[str]:
    return {hypothesis.key for hypothesis in drill.hypotheses}


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_the_defaults_are_valid_knob_settings(drill: Drill) -> None:
    assert resolve_knobs(drill, {}) == {knob.name: knob.default for knob in drill.knobs}
    for knob in drill.knobs:
        if knob.choices is not None and knob.kind != "float-list":
            assert knob.default in knob.choices, knob.name
        bounds = [b for b in (knob.minimum, knob.maximum) if b is not None]
        if len(bounds) == 2:
            assert bounds[0] <= bounds[1], knob.name


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_hypotheses_are_distinct_and_name_the_healthy_outcome(drill: Drill) -> None:
    keys = [hypothesis.key for hypothesis in drill.hypotheses]
    assert len(keys) == len(set(keys))
    assert drill.healthy is None or drill.healthy in keys


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_the_default_run_is_read_by_the_drills_own_charts_and_diagnosis(drill: Drill) -> None:
    record = default_run(drill.slug)
    assert record["status"] in ("ok", "error"), record["error"]
    assert record["observed"] in hypothesis_keys(drill)
    # Every series the run reported is drawn on some chart, and every chart draws something
    # that exists in the run.
    patterns = [metric for chart in drill.charts for metric in chart.metrics]
    for name in record["metrics"]:
        assert any(_matches(name, pattern) for pattern in patterns), f"{name} is on no chart"
    for chart in drill.charts:
        assert any(
            _matches(name, pattern) for pattern in chart.metrics for name in record["metrics"]
        ), f"chart {chart.key!r} draws nothing of the default run"


def _matches(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern) if pattern.endswith("*") else name == pattern


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_observations_name_numbers_the_run_reports(drill: Drill) -> None:
    signature = default_run(drill.slug)["signature"]
    if drill.signature_type is not None:
        assert tuple(signature) == drill.signature_type.keys()
    for observation in drill.observations:
        assert observation.key in signature, observation.key
        assert observation.reference is None or observation.reference in signature
        assert set(observation.reference_for) <= hypothesis_keys(drill), observation.key
    for chart in drill.charts:
        for reference in chart.references:
            assert reference.signature_key in signature, (chart.key, reference.label)


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_diagnose_answers_with_a_listed_hypothesis_even_for_an_empty_signature(
    drill: Drill,
) -> None:
    assert drill.diagnose({}, "the run ended before it reported anything") in hypothesis_keys(drill)


@pytest.mark.parametrize("drill", DRILLS, ids=lambda drill: drill.slug)
def test_numeric_predictions_name_signature_fields_with_a_stated_band(drill: Drill) -> None:
    keys = [prediction.key for prediction in drill.numeric_predictions]
    assert len(keys) == len(set(keys))
    for prediction in drill.numeric_predictions:
        assert drill.signature_type is not None, "a numeric prediction needs a signature type"
        assert prediction.key in drill.signature_type.keys(), prediction.key
        assert prediction.label and prediction.unit and prediction.help and prediction.reported_as
        bands = (prediction.absolute_band, prediction.relative_band)
        assert any(band is not None for band in bands), "state the band, even if it is 0"
        assert all(band is None or band >= 0 for band in bands)
