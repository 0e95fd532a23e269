"""Runs drawn on shared axes: an attempt beside the same learner's other attempts of its drill
(`/attempts/15?compare=12,14`), and a submission's failed run beside its fixed one.

Only the attempt's own learner's drill attempts are offered or accepted; whoever may read the
attempt may read those (access is granted per learner, app/web/access.py). A case's runs never are:
their knobs and series would name the hidden cause.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import Session

from app.accounts.models import MAX_ROW_ID
from app.core.whole_numbers import whole_number
from app.runs import evidence
from app.runs.models import Attempt

MAX_COMPARED = 5  # more runs than this on one chart is a tangle, not a comparison


class InvalidComparison(ValueError):
    """The `compare` query is not a list of attempt ids (answered 422)."""


class NotComparable(LookupError):
    """An id that is not another attempt of this learner's drill (answered 404, exactly like an
    attempt that does not exist)."""


def attempt_ids(values: Iterable[str]) -> list[int]:
    """Ids from `?compare=12,15` or `?compare=12&compare=15`, in order, without repeats."""
    ids: list[int] = []
    for value in values:
        for part in value.split(","):
            text = part.strip()
            if not text:
                continue
            row_id = whole_number(text, maximum=MAX_ROW_ID)
            if not row_id:
                raise InvalidComparison(f"compare: {text[:20]!r} is not an attempt number.")
            if row_id not in ids:
                ids.append(row_id)
    return ids


def parse_ids(values: Iterable[str]) -> list[int]:
    """`attempt_ids`, at most MAX_COMPARED of them."""
    ids = attempt_ids(values)
    if len(ids) > MAX_COMPARED:
        raise InvalidComparison(f"compare: at most {MAX_COMPARED} runs at once.")
    return ids


def choices(session: Session, attempt: Attempt) -> list[Attempt]:
    """The finished attempts `attempt` may be compared with: its learner's other runs of the
    drill (evidence.attempts_for leaves case runs out), newest first."""
    return [
        other
        for other in evidence.attempts_for(
            session, learner_id=attempt.learner_id, drill_slug=attempt.drill_slug
        )
        if other.id != attempt.id and other.final
    ]


def run_label(attempt: Attempt) -> str:
    return f"#{attempt.id}"


def compared(session: Session, attempt: Attempt, ids: list[int]) -> list[Attempt]:
    """The runs `ids` names, in its order, leaving out `attempt` itself (drawn anyway);
    NotComparable for an id that `choices` would not offer (someone else's, a case run, another
    drill, unfinished)."""
    offered = {other.id: other for other in choices(session, attempt)}
    runs = []
    for attempt_id in ids:
        if attempt_id == attempt.id:
            continue
        other = offered.get(attempt_id)
        if other is None:
            raise NotComparable(f"No attempt {attempt_id} of this drill to compare with.")
        runs.append(other)
    return runs


def overlay(session: Session, others: list[Attempt]) -> list[dict[str, Any]]:
    """The runs `others` as chart data, [{"id", "label", "series"}]."""
    return [
        {
            "id": other.id,
            "label": run_label(other),
            "series": evidence.metric_series(session, attempt_id=other.id),
        }
        for other in others
        if other.id is not None
    ]


def pair(
    *, failed: Attempt, failed_series: dict[str, list[Any]], fixed: Attempt
) -> tuple[str, list[dict[str, Any]]]:
    """A submission's runs on shared axes: the fixed run's label, and the failed run to draw
    beside it."""
    label = f"failed {run_label(failed)}"
    return f"fixed {run_label(fixed)}", [{"label": label, "series": failed_series}]


def attempt_page_context(
    session: Session, attempt: Attempt, values: Iterable[str]
) -> dict[str, Any]:
    """What the attempt page adds for its comparison: the runs offered, the ones chosen (by
    `?compare=`) and their chart data, and the query that keeps them when the panel refreshes."""
    others = compared(session, attempt, parse_ids(values))
    runs = overlay(session, others)
    return {
        "compare_choices": choices(session, attempt),
        "compare_attempts": others,
        "compare_runs": runs,
        "compare_ids": [run["id"] for run in runs],
        "compare_query": ",".join(str(run["id"]) for run in runs),
    }
