"""Instructors review answered rounds on the case rubric (alternatives weighed, a first test
that separates, evidence named for the fix): a decision, scores and a comment, once per round.
The leading hypothesis and the test are scored already; the review is for the words."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session, col, select

from app.accounts.models import Role, User
from app.cases.models import CASE_RUBRIC
from app.grading.rubric import InvalidReview, store_decision_once
from app.grading.saved_comments import parse_review_with_saved
from app.practice.round_models import DiagnosisRound, RoundReview
from app.web.access import learners_of


class RoundReviewConflict(InvalidReview):
    """The round is not open to review (not answered yet, or reviewed already): 409."""


ALREADY_REVIEWED = "this round has already been reviewed"


def review_of(session: Session, round_id: int) -> RoundReview | None:
    return session.exec(select(RoundReview).where(RoundReview.round_id == round_id)).first()


def record_round_review(
    session: Session, *, diagnosis_round: DiagnosisRound, reviewer: User, fields: Mapping[str, str]
) -> RoundReview:
    assert diagnosis_round.id is not None and reviewer.id is not None
    if diagnosis_round.answered_at is None:
        raise RoundReviewConflict("decision", "a round is reviewed once its learner has answered")
    if review_of(session, diagnosis_round.id) is not None:
        raise RoundReviewConflict("decision", ALREADY_REVIEWED)
    form, keep = parse_review_with_saved(
        session, reviewer_id=reviewer.id, fields=fields, rubric=CASE_RUBRIC
    )
    review = RoundReview(
        round_id=diagnosis_round.id,
        instructor_id=reviewer.id,
        decision=form.decision,
        scores=form.scores,
        comment=form.comment,
    )
    # uq_round_review_round: of two reviews sent at once, one is stored.
    store_decision_once(session, [review, *keep], RoundReviewConflict("decision", ALREADY_REVIEWED))
    session.refresh(review)
    return review


def unreviewed_rounds(session: Session, *, reviewer: User) -> list[tuple[DiagnosisRound, User]]:
    """Answered rounds without a review, of the learners this reviewer may review, oldest
    answer first."""
    query = (
        select(DiagnosisRound, User)
        .join(User, col(User.id) == col(DiagnosisRound.learner_id))
        .outerjoin(RoundReview, col(RoundReview.round_id) == col(DiagnosisRound.id))
        .where(col(DiagnosisRound.answered_at).is_not(None), col(RoundReview.id).is_(None))
    )
    if reviewer.role != Role.admin:
        query = query.where(col(DiagnosisRound.learner_id).in_(learners_of(session, reviewer)))
    rows = session.exec(
        query.order_by(col(DiagnosisRound.answered_at), col(DiagnosisRound.id))
    ).all()
    return [(diagnosis_round, learner) for diagnosis_round, learner in rows]
