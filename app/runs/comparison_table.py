"""The table under runs drawn on shared axes: one row per run, a column for each knob whose value
differs between them, and the numbers that tell the runs apart.

A comparison is read as "the run with lr=1 ended at 1e+36": knobs against numbers. A column of a
knob every run shares says nothing about the difference and hides the one that does, so such
knobs are named once, above the table ("Same in all"). The seed counts as a knob: two runs that
differ only by it show what noise alone does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.runs.models import Attempt
from app.runs.views import observation_rows

# The series whose last and lowest values every comparison shows, in a drill that plots one. A
# drill's "final loss" observation is often a mean over the last steps; these two are read off
# the curve itself, so they exist even for a run that crashed before its signature was written.
LOSS_SERIES = "loss"
LAST_LOSS = "loss at the last step"
LOWEST_LOSS = "lowest loss"
NOT_FINITE = "not finite"  # a point stored without a value: the run reported NaN or inf there


@dataclass(frozen=True)
class ComparedRun:
    attempt: Attempt
    series: dict[str, list[list[Any]]]


def for_attempt_page(context: dict[str, Any]) -> dict[str, Any] | None:
    """The table of an attempt page's comparison (app.runs.views.attempt_context with
    app.runs.run_comparison.attempt_page_context): the page's run first, then the ones chosen. None
    when nothing is compared, or while the page's run hides its drawn setup."""
    attempt: Attempt = context["attempt"]
    if not context["compare_runs"] or attempt.setup_concealed:
        return None
    others = [
        ComparedRun(other, run["series"])
        for other, run in zip(context["compare_attempts"], context["compare_runs"], strict=True)
    ]
    return knob_table(context["drill"], [ComparedRun(attempt, context["series"]), *others])


def settings(attempt: Attempt) -> dict[str, Any]:
    """The knobs a run was started with, and its seed."""
    return {**attempt.knobs, "seed": attempt.seed}


def knob_table(drill: dict[str, Any], runs: Sequence[ComparedRun]) -> dict[str, Any]:
    """{"same": [(knob, value)], "knobs": [differing knob], "numbers": [column label],
    "rows": [{"attempt", "knobs": [value or None], "numbers": [value]}]}, rows in `runs`' order.
    A knob one run lacks (an older version of the drill) differs."""
    chosen = [settings(run.attempt) for run in runs]
    names = sorted({name for knobs in chosen for name in knobs})
    same = [name for name in names if _shared(chosen, name)]
    differing = [name for name in names if name not in same]
    numbers = [_numbers(drill, run) for run in runs]
    labels = _column_labels(drill, numbers)
    return {
        "same": [(name, chosen[0][name]) for name in same],
        "knobs": differing,
        "numbers": labels,
        "rows": [
            {
                "attempt": run.attempt,
                "knobs": [knobs.get(name) for name in differing],
                "numbers": [values.get(label) for label in labels],
            }
            for run, knobs, values in zip(runs, chosen, numbers, strict=True)
        ],
    }


def _shared(chosen: list[dict[str, Any]], name: str) -> bool:
    # Equality, not hashing: a knob's value read back from JSON may be a list.
    return all(name in knobs and knobs[name] == chosen[0][name] for knobs in chosen)


def _numbers(drill: dict[str, Any], run: ComparedRun) -> dict[str, Any]:
    """One run's numbers by column label: the loss curve's last and lowest values, then the
    drill's observations as the attempt page's signature table labels them."""
    values: dict[str, Any] = {}
    points = run.series.get(LOSS_SERIES)
    if points:
        last = points[-1][1]
        finite = [value for _, value in points if value is not None]
        values[LAST_LOSS] = NOT_FINITE if last is None else last
        values[LOWEST_LOSS] = min(finite) if finite else None
    signature = run.attempt.signature or {}
    verdict = run.attempt.observed_hypothesis
    for row in observation_rows(drill, signature, verdict=verdict):
        values[row["label"]] = row["value"]
    return values


def _column_labels(drill: dict[str, Any], numbers: list[dict[str, Any]]) -> list[str]:
    """The loss columns, then the drill's observations in its own order: only those some run
    has a value for (a signature holds what its run could measure, some of it as null)."""
    reported = {label for values in numbers for label, value in values.items() if value is not None}
    order = [LAST_LOSS, LOWEST_LOSS, *(item["label"] for item in drill["observations"])]
    return [label for label in dict.fromkeys(order) if label in reported]
