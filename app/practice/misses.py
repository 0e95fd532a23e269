"""A learner's misses become review items: a run that showed another failure than they
predicted, a case whose cause they named wrongly. Called in the transaction that ends the run
(whichever process ends it), so a miss is never lost and never costs the run its record."""

from datetime import datetime
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from app.cases.models import CaseAttempt
from app.core import limits
from app.practice.items import CASE_MISS, DRILL_MISS
from app.practice.models import ReviewCard, ReviewSource
from app.runs.models import Attempt


def _upsert_miss(session: Session, row: dict[str, Any]) -> None:
    """Open the miss's card, or bring an existing one back now pointing at the newest miss.
    One statement that cannot fail on a concurrent twin: it runs in the transaction that ends
    a run, which must never be lost to a duplicate key."""
    dialect = session.get_bind().dialect.name
    insert = (postgresql if dialect == "postgresql" else sqlite).insert
    statement = insert(ReviewCard).values(**row)
    statement = statement.on_conflict_do_update(
        index_elements=["learner_id", "item_key"],
        set_={
            "attempt_id": statement.excluded.attempt_id,
            "case_attempt_id": statement.excluded.case_attempt_id,
            "due_at": statement.excluded.due_at,
        },
    )
    session.execute(statement)


def note_drill_miss(session: Session, attempt: Attempt, *, now: datetime) -> None:
    """Called with a drill attempt that just ended, in the transaction ending it: a prediction
    the run did not bear out becomes a review item (one per drill and failure shown)."""
    if not attempt.is_drill_page_run or attempt.prediction_matched is not False:
        return
    key = f"{DRILL_MISS}{attempt.drill_slug}:{attempt.observed_hypothesis}"
    row = {
        "learner_id": attempt.learner_id,
        "item_key": key[: limits.MAX_ITEM_KEY],
        "source": ReviewSource.drill_miss,
        "attempt_id": attempt.id,
        "case_attempt_id": None,
        "due_at": now,
        "reviews": 0,
        "created_at": now,
    }
    _upsert_miss(session, row)


def note_case_miss(session: Session, case_attempt: CaseAttempt, *, now: datetime) -> None:
    """Called with a case attempt just revealed, in the same transaction: a wrongly named cause
    becomes a review item, which sends the learner back to a new draw of the case."""
    score = case_attempt.score or {}
    if score.get("cause_named") is not False:
        return
    row = {
        "learner_id": case_attempt.learner_id,
        "item_key": f"{CASE_MISS}{case_attempt.case_key}",
        "source": ReviewSource.case_miss,
        "attempt_id": None,
        "case_attempt_id": case_attempt.id,
        "due_at": now,
        "reviews": 0,
        "created_at": now,
    }
    _upsert_miss(session, row)
