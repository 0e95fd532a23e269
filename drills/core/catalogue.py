"""A JSON-safe description of a drill, for the web app's pages and `python -m drills list`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any
from weakref import WeakKeyDictionary

from drills.core.contract import Drill

# A drill's description never changes while the process runs (it is the class's constants), and
# building it (asdict of every knob, chart and observation) was half the catalogue page's time.
_descriptions: WeakKeyDictionary[Drill, dict[str, Any]] = WeakKeyDictionary()


def describe(drill: Drill) -> dict[str, Any]:
    """The description, built once per drill. Each caller gets its own outer dict (some add to
    it); the lists inside are shared and must be read, never changed."""
    description = _descriptions.get(drill)
    if description is None:
        description = _descriptions[drill] = _description(drill)
    return dict(description)


def _description(drill: Drill) -> dict[str, Any]:
    return {
        "slug": drill.slug,
        "title": drill.title,
        "summary": drill.summary,
        "symptom": drill.symptom,
        "scenario": drill.scenario,
        "version": drill.version,
        "healthy": drill.healthy,
        # asdict keeps tuples; _jsonable makes them lists so the result is plain JSON.
        "knobs": [_jsonable(asdict(knob)) for knob in drill.knobs],
        "hypotheses": [asdict(hypothesis) for hypothesis in drill.hypotheses],
        "charts": [_jsonable(asdict(chart)) for chart in drill.charts],
        "observations": [_jsonable(asdict(observation)) for observation in drill.observations],
        "numeric_predictions": [
            asdict(prediction) | {"band": prediction.band}
            for prediction in drill.numeric_predictions
        ],
    }


def _jsonable(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: list(val) if isinstance(val, tuple) else val for key, val in fields.items()}
