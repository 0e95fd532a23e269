"""The drill page's "Compare selected": the finished runs a learner ticked in their list of
attempts become the first one's page with the others drawn beside it
(`/attempts/15?compare=12`).

A plain GET form, so it works without JavaScript; the comparison itself is
app/runs/run_comparison.py, with its limit and its rule of whose runs may be drawn. Too many or
too few ticks are answered with the drill page again, the ticks kept and the reason beside the
button, never by quietly dropping runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import Session

from app.runs import evidence
from app.runs.models import Attempt
from app.runs.run_comparison import MAX_COMPARED, NotComparable, attempt_ids

# The first ticked run's page draws that run and compares it with the rest.
MAX_PICKED = MAX_COMPARED + 1


class UnfitPick(ValueError):
    """Fewer than two runs ticked, or more than MAX_PICKED: said beside the button (a 422)."""


def comparison_url(
    session: Session, *, learner_id: int, drill_slug: str, values: Iterable[str]
) -> str:
    """Where the ticked runs (`?run=15&run=12`, the list's order: newest first) are compared:
    the first one's page. InvalidComparison for what is not an attempt number, NotComparable
    for a run that is not this learner's finished attempt of the drill."""
    ids = attempt_ids(values)
    if len(ids) < 2:
        raise UnfitPick("Tick two or more finished runs to draw them on the same axes.")
    if len(ids) > MAX_PICKED:
        extra = len(ids) - MAX_PICKED
        raise UnfitPick(
            f"You ticked {len(ids)} runs: at most {MAX_PICKED} fit on one chart. "
            f"Untick {extra} and compare again."
        )
    finished = {
        attempt.id
        for attempt in evidence.attempts_for(session, learner_id=learner_id, drill_slug=drill_slug)
        if attempt.final
    }
    for attempt_id in ids:
        if attempt_id not in finished:
            raise NotComparable(f"No finished attempt {attempt_id} of this drill to compare.")
    first, *others = ids
    return f"/attempts/{first}?compare={','.join(str(i) for i in others)}"


def history_context(
    history: list[Attempt], *, picked: Iterable[str] = (), error: str | None = None
) -> dict[str, Any]:
    """What templates/partials/attempt_history.html needs: the runs, the ones ticked (kept when
    the list refreshes, and when a pick comes back refused) and why a pick was refused."""
    return {
        "history": history,
        "picked": set(picked),
        "compare_limit": MAX_PICKED,
        "compare_errors": {"compare": error} if error else {},
    }
