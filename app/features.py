"""What each feature adds to a run's life, registered in one place.

Every process that ends runs calls `install()` before it does: the web app's factory
(app/main.py) and a worker's progress store (app/runner/progress_store.py). A feature's module
is imported here and nowhere on the run's path, so `app/runs/` depends on none of them.

Every feature's tables come with them (`app.tables`): a process that stores a run needs the whole
metadata, because a run's row points at tables other features own (an attempt at its round).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmodel import Session

import app.tables  # noqa: F401  (the whole metadata: see above)
from app.cases.records import reveal_after_run
from app.exercises.judgements import keep_judgement
from app.models.time import utcnow
from app.practice.misses import note_case_miss, note_code_miss, note_drill_miss
from app.runs.lifecycle import when_a_run_ends
from app.runs.models import Attempt


def _judgement(session: Session, attempt: Attempt, record: Mapping[str, Any] | None) -> None:
    if record is not None and attempt.exercise_slug is not None:
        keep_judgement(session, attempt=attempt, judgement=record.get("exercise") or {})


def _reveal(session: Session, attempt: Attempt, record: Mapping[str, Any] | None) -> None:
    revealed = reveal_after_run(session, attempt)
    if revealed is not None:  # a wrong cause named becomes a review item, as a drill miss does
        note_case_miss(session, revealed, now=utcnow())


def _miss(session: Session, attempt: Attempt, record: Mapping[str, Any] | None) -> None:
    note_drill_miss(session, attempt, now=utcnow())


def _code_miss(session: Session, attempt: Attempt, record: Mapping[str, Any] | None) -> None:
    note_code_miss(session, attempt, record, now=utcnow())


def install() -> None:
    """Register every feature's hook (idempotent)."""
    when_a_run_ends("exercises: keep the judgement", _judgement)
    when_a_run_ends("cases: score and reveal a fix run's case; practice: a miss to review", _reveal)
    when_a_run_ends("practice: a missed prediction becomes a review item", _miss)
    when_a_run_ends("practice: a failed check of edited code becomes a review item", _code_miss)
