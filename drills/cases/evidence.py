"""What a learner may see of a case run before the verdict, and a check that it tells nothing.

A drill's record carries its knobs, its replay command and notes written for the drill page
("the targets in the loss are re-permuted every step"): fine once the cause is known, a give-away
before. A case run shows only what its experiment shows, under the case's neutral names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Experiment, ShownChart
from drills.core.contract import series_label as contract_series_label


def series_label(charts: Iterable[ShownChart], metric: str) -> str | None:
    """The label a case shows for a metric series, or None when no chart of the case shows it."""
    for chart in charts:
        label = contract_series_label(chart.series, metric)
        if label is not None:
            return label
    return None


def observation_label(case_set: CaseSet, key: str) -> str:
    for observation in case_set.drill_object.observations:
        if observation.key == key:
            return observation.label
    return key.replace("_", " ")


def visible(
    case_set: CaseSet, experiment: Experiment | None, record: Mapping[str, Any]
) -> dict[str, Any]:
    """The evidence of one run a learner may read before the verdict: the case's charts (series
    renamed), the numbers the symptom or the experiment shows, and the views it opens."""
    series: dict[str, list[Any]] = {}
    for metric, points in (record.get("metrics") or {}).items():
        label = series_label(case_set.charts, metric)
        if label is not None:
            series[label] = points
    signature = record.get("signature") or {}
    keys = experiment.observations if experiment else case_set.symptom_observations
    shown: dict[str, Any] = {
        "status": record.get("status"),
        "series": series,
        "numbers": [
            {"label": observation_label(case_set, key), "value": signature.get(key)} for key in keys
        ],
    }
    views = experiment.shows if experiment else ()
    diagnostics = record.get("diagnostics") or {}
    # What PyTorch itself raised is evidence a practitioner would see; the drill's own error
    # text explains the cause and stays hidden until the verdict.
    if record.get("error") and diagnostics.get("torch_error"):
        shown["raised"] = diagnostics["torch_error"]
    inputs = record.get("inputs") or {}
    if "parameters" in views:
        shown["parameters"] = diagnostics.get("parameters", [])
    if "inputs" in views:
        # Shapes and decoded pairs only: a drill's "note" says what it did to them.
        shown["inputs"] = {"shapes": inputs.get("shapes"), "examples": inputs.get("examples")}
    if "tables" in views:
        shown["tables"] = diagnostics.get("tables", [])
    return shown


def telltales(case: Case) -> set[str]:
    """Strings that would name any cause the case may hide (see cause_telltales): the page of
    an open case must name none of them, whichever was drawn."""
    found: set[str] = set()
    for key in case.causes:
        found |= cause_telltales(case.case_set, case.cause(key))
    return found


def cause_telltales(case_set: CaseSet, cause: Cause) -> set[str]:
    """Strings that would name a hidden cause: its key, the drill's slug and title, and each
    planted knob value that is more than a plain word ("shuffled-labels", not "none")."""
    found = {cause.key, case_set.drill, case_set.drill_object.title.lower()}
    for name, value in cause.knobs.items():
        text = str(value)
        if isinstance(value, str) and ("-" in text or "_" in text):
            found.add(text.lower())
        found.add(f"{name}={text}".lower())
    return found


def leaks(case: Case, shown: Any) -> list[str]:
    """The telltales of the case found in `shown` (a page, a JSON document, an event stream)."""
    return found_in(telltales(case), shown)


def found_in(telltales: set[str], shown: Any) -> list[str]:
    """Which of the telltales `shown` spells, as a whole word."""
    text = shown if isinstance(shown, str) else json.dumps(shown, default=str)
    lowered = text.lower()
    return sorted(
        telltale
        for telltale in telltales
        if re.search(rf"(?<![a-z0-9-]){re.escape(telltale)}(?![a-z0-9-])", lowered)
    )
