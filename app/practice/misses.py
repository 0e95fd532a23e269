"""A learner's misses become review items: a run that showed another failure than they
predicted, a case whose cause they named wrongly, a check their own exercise code failed. Called
in the transaction that ends the run (whichever process ends it), so a miss is never lost and
never costs the run its record."""

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from app.cases.models import CaseAttempt
from app.core import limits
from app.exercises.models import ExerciseRun
from app.practice.code_items import CODE_MISS, code_miss_key
from app.practice.items import CASE_MISS, DRILL_MISS
from app.practice.models import ReviewCard, ReviewLogEntry, ReviewRating, ReviewSource
from app.runs.models import Attempt
from drills.practice import scheduling

# A failed check comes back a day later: written again from memory, not from the screen the
# learner just left. FSRS schedules it from its first grading on.
CODE_MISS_FIRST_INTERVAL = timedelta(days=1)
# The judge's verdicts that grade a due code item; "error" and "not-attempted" say nothing
# of the learner's recall (the harness failed, or the starter ran as given).
CODE_RATINGS = {"passed": ReviewRating.good, "failed": ReviewRating.again}


def _upsert_miss(session: Session, row: dict[str, Any], *, reopen: bool = True) -> None:
    """Open the miss's card, or bring an existing one back now pointing at the newest miss.
    One statement that cannot fail on a concurrent twin: it runs in the transaction that ends
    a run, which must never be lost to a duplicate key."""
    dialect = session.get_bind().dialect.name
    insert = (postgresql if dialect == "postgresql" else sqlite).insert
    statement = insert(ReviewCard).values(**row)
    changes = {
        "attempt_id": statement.excluded.attempt_id,
        "case_attempt_id": statement.excluded.case_attempt_id,
    }
    if reopen:
        changes["due_at"] = statement.excluded.due_at
    statement = statement.on_conflict_do_update(
        index_elements=["learner_id", "item_key"], set_=changes
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


def note_code_miss(
    session: Session, attempt: Attempt, record: Mapping[str, Any] | None, *, now: datetime
) -> None:
    """Called with an exercise run that just ended, in the transaction ending it. First its
    verdict grades the learner's due code items of the exercise (a pass Good, a fail Again);
    then each check the learner's edited code failed becomes an item (one per exercise and
    check: a known one keeps its schedule and points at this run)."""
    if attempt.exercise_slug is None or record is None:
        return
    judgement = record.get("exercise") or {}
    status = judgement.get("status") if isinstance(judgement, Mapping) else None
    rating = CODE_RATINGS.get(status) if isinstance(status, str) else None
    if rating is not None:
        _grade_due_code_items(session, attempt, rating, now=now)
    run = session.exec(select(ExerciseRun).where(ExerciseRun.attempt_id == attempt.id)).first()
    if run is None or not run.diff.strip():
        return  # the starter as given is nobody's miss
    checks = judgement.get("checks") if isinstance(judgement, Mapping) else None
    failed = {
        str(check["key"])
        for check in checks or []
        if isinstance(check, Mapping) and check.get("status") == "fail" and check.get("key")
    }
    for check_key in sorted(failed):
        row = {
            "learner_id": attempt.learner_id,
            "item_key": code_miss_key(attempt.exercise_slug, check_key)[: limits.MAX_ITEM_KEY],
            "source": ReviewSource.code_miss,
            "attempt_id": attempt.id,
            "case_attempt_id": None,
            "due_at": now + CODE_MISS_FIRST_INTERVAL,
            "reviews": 0,
            "created_at": now,
        }
        _upsert_miss(session, row, reopen=False)


def _grade_due_code_items(
    session: Session, attempt: Attempt, rating: ReviewRating, *, now: datetime
) -> None:
    """Reschedule the learner's code items of this exercise that were due when the run ended,
    logging each review with the run as its answer."""
    assert attempt.exercise_slug is not None
    due = session.exec(
        select(ReviewCard).where(
            ReviewCard.learner_id == attempt.learner_id,
            col(ReviewCard.item_key).startswith(f"{CODE_MISS}{attempt.exercise_slug}:"),
            col(ReviewCard.due_at) <= now,
        )
    ).all()
    for card in due:
        assert card.id is not None
        state = (
            scheduling.from_json(json.dumps(card.schedule))
            if card.schedule is not None
            else scheduling.new_state(now)
        )
        after, log = scheduling.review(state, scheduling.Rating(rating.value), now)
        card.schedule = json.loads(scheduling.to_json(after))
        card.due_at = after.due
        card.reviews += 1
        session.add(card)
        session.add(
            ReviewLogEntry(
                card_id=card.id,
                learner_id=attempt.learner_id,
                item_key=card.item_key,
                answer=f"Wrote the exercise again: run #{attempt.id} {rating_words(rating)}.",
                rating=rating,
                elapsed_days=log.elapsed_days,
                retrievability=log.retrievability,
                due_after=after.due,
                reviewed_at=now,
            )
        )


def rating_words(rating: ReviewRating) -> str:
    return "passed" if rating is ReviewRating.good else "failed"
