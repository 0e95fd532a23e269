"""Rows for the revise-and-resubmit tests: a case or round review, and a revision of either,
straight in the database (tests/app/factories.py makes the attempts and rounds)."""

from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app.cases.models import CASE_RUBRIC, CaseReview
from app.grading.revisions.models import DiagnosisRevision
from app.models.time import utcnow
from app.practice.round_models import RoundReview

CASE_SCORES = {key: {"score": 1, "comment": ""} for key, _label in CASE_RUBRIC}
# A review form that passes: a score per criterion, and the comment a request for changes needs.
REVIEW_FORM = {f"score.{key}": "1" for key, _label in CASE_RUBRIC} | {"comment": "Say more."}
# A revision form that passes for the factories' case and round ("a-fresh-head" and the
# optimizer-membership round share a case set: cause-2 is another cause than the leading one).
REVISION_FORM = {
    "alternatives": "cause-2",
    "first_test": "update-sizes",
    "intervention": "add the backbone's parameters to the optimizer",
    "confirmation": "the backbone's update-to-weight ratio rises above 1e-4",
    "note": "I named an alternative and what would tell it apart.",
}


def _save(engine: Engine, row: Any) -> int:
    with Session(engine) as session:
        session.add(row)
        session.commit()
        session.refresh(row)
        row_id: int = row.id
        return row_id


def add_case_review(
    engine: Engine, case_attempt_id: int, instructor_id: int, *, decision: str
) -> int:
    return _save(
        engine,
        CaseReview(
            case_attempt_id=case_attempt_id,
            instructor_id=instructor_id,
            decision=decision,
            scores=CASE_SCORES,
            comment="Weigh an alternative.",
        ),
    )


def add_round_review(engine: Engine, round_id: int, instructor_id: int, *, decision: str) -> int:
    return _save(
        engine,
        RoundReview(
            round_id=round_id,
            instructor_id=instructor_id,
            decision=decision,
            scores=CASE_SCORES,
            comment="Name the evidence.",
        ),
    )


def add_revision(
    engine: Engine,
    learner_id: int,
    *,
    case_attempt_id: int | None = None,
    round_id: int | None = None,
    number: int = 1,
    decision: str | None = None,
    reviewer_id: int | None = None,
) -> int:
    """A revision of a case attempt or a round; reviewed when `decision` is given."""
    return _save(
        engine,
        DiagnosisRevision(
            case_attempt_id=case_attempt_id,
            round_id=round_id,
            learner_id=learner_id,
            number=number,
            diagnosis={
                "leading": "backbone-not-optimized",
                "alternatives": ["head-not-optimized"],
                "first_test": "update-sizes",
                "intervention": f"revision {number}: optimize every parameter",
                "confirmation": f"revision {number}: the backbone's updates are not zero",
            },
            note=f"note of revision {number}",
            decision=decision,
            scores=CASE_SCORES if decision else None,
            comment="Closer." if decision else "",
            reviewer_id=reviewer_id if decision else None,
            reviewed_at=utcnow() if decision else None,
        ),
    )
