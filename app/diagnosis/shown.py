"""How a case set is put before a learner who has not yet been told its cause: causes as
opaque options, charts and series under the set's own names, a run's record as the drills'
evidence module reads it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.whole_numbers import whole_number
from app.runs.models import Attempt
from drills.cases import evidence as case_evidence
from drills.cases.contract import CaseSet


def cause_options(case_set: CaseSet) -> list[dict[str, str]]:
    """Causes as form options. Their values are positions ("cause-2"), not keys: a key can
    echo a knob value, and nothing on the page may spell the hidden cause before the verdict."""
    return [
        {"value": f"cause-{index}", "text": cause.text}
        for index, cause in enumerate(case_set.causes, start=1)
    ]


def cause_key(case_set: CaseSet, value: str) -> str | None:
    """The cause key behind an option value, or None for a value no option has."""
    prefix = "cause-"
    if not value.startswith(prefix):
        return None
    index = whole_number(value[len(prefix) :], maximum=len(case_set.causes))
    if index:
        return case_set.causes[index - 1].key
    return None


def option_of(case_set: CaseSet, key: str) -> str:
    for index, cause in enumerate(case_set.causes, start=1):
        if cause.key == key:
            return f"cause-{index}"
    return ""


def chart_specs(case_set: CaseSet) -> list[dict[str, Any]]:
    """The case's charts in the shape app.js draws (see drills' Chart), under case names."""
    specs = []
    for index, chart in enumerate(case_set.charts, start=1):
        metrics = [
            f"{label} *" if name.endswith("*") else label for name, label in chart.series.items()
        ]
        specs.append(
            {
                "key": f"c{index}",
                "title": chart.title,
                "metrics": metrics,
                "y_label": chart.y_label,
                "log_y": chart.log_y,
                "x_label": chart.x_label,
                "kind": "lines",
                "references": [],
            }
        )
    return specs


def rename_for(case_set: CaseSet) -> Callable[[str], str | None]:
    def rename(metric: str) -> str | None:
        return case_evidence.series_label(case_set.charts, metric)

    return rename


def stored_record(attempt: Attempt) -> dict[str, Any]:
    """A finished run as the drills' evidence module reads records (its series aside)."""
    return {
        "status": "ok" if attempt.status == "succeeded" else attempt.status,
        "error": attempt.error,  # only whether there was one is shown before the verdict
        "metrics": {},
        "signature": attempt.signature or {},
        "diagnostics": attempt.diagnostics or {},
        "inputs": attempt.inputs or {},
    }
