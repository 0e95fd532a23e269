"""A JSON-safe description of a drill, for the web app's pages and `python -m drills list`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drills.core.contract import Drill


def describe(drill: Drill) -> dict[str, Any]:
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
