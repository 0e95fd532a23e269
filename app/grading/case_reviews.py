"""Instructors review revealed case attempts as they review submissions: a decision, the case
rubric and a comment, once per attempt."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session, col, select

from app.accounts.models import Role, User
from app.cases.models import CASE_RUBRIC, CaseAttempt, CaseReview, CaseStage
from app.grading.rubric import InvalidReview, store_decision_once
from app.grading.saved_comments import parse_review_with_saved
from app.web.access import learners_of


class CaseReviewConflict(InvalidReview):
    """The attempt is not open to review (not revealed yet, or reviewed already): 409."""


ALREADY_REVIEWED = "this case attempt has already been reviewed"


def review_of(session: Session, case_attempt_id: int) -> CaseReview | None:
    return session.exec(
        select(CaseReview).where(CaseReview.case_attempt_id == case_attempt_id)
    ).first()


def record_case_review(
    session: Session, *, case_attempt: CaseAttempt, reviewer: User, fields: Mapping[str, str]
) -> CaseReview:
    assert case_attempt.id is not None and reviewer.id is not None
    if case_attempt.stage != CaseStage.revealed:
        raise CaseReviewConflict("decision", "a case is reviewed once its truth is revealed")
    if review_of(session, case_attempt.id) is not None:
        raise CaseReviewConflict("decision", ALREADY_REVIEWED)
    form, keep = parse_review_with_saved(
        session, reviewer_id=reviewer.id, fields=fields, rubric=CASE_RUBRIC
    )
    review = CaseReview(
        case_attempt_id=case_attempt.id,
        instructor_id=reviewer.id,
        decision=form.decision,
        scores=form.scores,
        comment=form.comment,
    )
    # uq_case_review_attempt: of two reviews sent at once, one is stored.
    store_decision_once(session, [review, *keep], CaseReviewConflict("decision", ALREADY_REVIEWED))
    session.refresh(review)
    return review


def unreviewed_cases(session: Session, *, reviewer: User) -> list[tuple[CaseAttempt, User]]:
    """Revealed case attempts without a review, of the learners this reviewer may review."""
    query = (
        select(CaseAttempt, User)
        .join(User, col(User.id) == col(CaseAttempt.learner_id))
        .outerjoin(CaseReview, col(CaseReview.case_attempt_id) == col(CaseAttempt.id))
        .where(CaseAttempt.stage == CaseStage.revealed, col(CaseReview.id).is_(None))
    )
    if reviewer.role != Role.admin:
        query = query.where(col(CaseAttempt.learner_id).in_(learners_of(session, reviewer)))
    rows = session.exec(query.order_by(col(CaseAttempt.revealed_at), col(CaseAttempt.id))).all()
    return [(case_attempt, learner) for case_attempt, learner in rows]
