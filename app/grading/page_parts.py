"""What grading adds to the pages of the work it reviews: a case attempt's and a round's page
get the instructor's review (the rubric form for the learner's instructor, the review once
given), revise and resubmit once the work is revealed or answered, saved comments and the next
item of the queue. Registered by app/page_hooks.py (app/web/pages.py says why)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.accounts.models import User
from app.cases.models import CASE_RUBRIC, CaseAttempt, CaseStage
from app.grading import case_reviews, round_reviews
from app.grading import queue as review_queue
from app.grading.revisions import service as revision_service
from app.grading.revisions import views as revision_views
from app.grading.saved_comments import saved_comments_of
from app.practice.round_models import DiagnosisRound
from app.web.access import can_review_work_of


def case_part(
    session: Session, case_attempt: CaseAttempt, viewer: User | None, context: dict[str, Any]
) -> dict[str, Any]:
    assert case_attempt.id is not None
    reviewer = _reviewer(session, viewer, case_attempt.learner_id, owner=context["owner"])
    added: dict[str, Any] = {}
    if case_attempt.stage == CaseStage.revealed:
        subject = revision_service.case_subject(session, case_attempt)
        added |= revision_views.revision_context(
            session, subject, owner=context["owner"], can_review=reviewer
        )
        added["revision_base"] = f"/cases/attempts/{case_attempt.id}"
    review = case_reviews.review_of(session, case_attempt.id)
    return added | _review_panel(session, viewer, reviewer, review, added)


def round_part(
    session: Session, diagnosis_round: DiagnosisRound, viewer: User | None, context: dict[str, Any]
) -> dict[str, Any]:
    assert diagnosis_round.id is not None
    reviewer = _reviewer(session, viewer, diagnosis_round.learner_id, owner=context["owner"])
    added: dict[str, Any] = {}
    if diagnosis_round.answered_at is not None:
        subject = revision_service.round_subject(session, diagnosis_round)
        added |= revision_views.revision_context(
            session, subject, owner=context["owner"], can_review=reviewer
        )
        added["revision_base"] = f"/practice/rounds/{diagnosis_round.id}"
    review = round_reviews.review_of(session, diagnosis_round.id)
    return added | _review_panel(session, viewer, reviewer, review, added)


def _reviewer(session: Session, viewer: User | None, learner_id: int, *, owner: bool) -> bool:
    """The learner's instructor (or an admin) reads it to review; the learner never does."""
    return viewer is not None and not owner and can_review_work_of(session, viewer, learner_id)


def _review_panel(
    session: Session, viewer: User | None, reviewer: bool, review: Any, added: dict[str, Any]
) -> dict[str, Any]:
    # Once reviewed (and no revision waits), its reviewer goes on to the next item in one click.
    decided = reviewer and review is not None and not added.get("review_revision")
    return {
        "review": review,
        "rubric": CASE_RUBRIC,
        "can_review": reviewer,
        "decided": decided,
        "next_item": review_queue.next_in_queue(session, reviewer=viewer)
        if viewer is not None and decided
        else None,
        "saved_comments": saved_comments_of(session, owner_id=viewer.saved_id)
        if viewer is not None and reviewer and review is None
        else [],
    }
