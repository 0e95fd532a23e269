"""The revise-and-resubmit loop of one case attempt or curve round.

After an instructor reviews a diagnosis and asks for changes, its learner may send one revised
diagnosis; it waits in the review queue until the instructor reviews it; a review asking for
changes again opens the next revision, an acceptance ends the loop. A revision is words only: the
draw, its runs and its score stay as they were, and so does the leading hypothesis, which was
scored before the truth was shown.

Refusals: a revision while no change is asked for (or one is waiting for review), a second copy
of the same revision, and a review of a revision that is not the latest or was reviewed already.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.models import User
from app.cases.models import CASE_RUBRIC, CaseAttempt
from app.core.limits import MAX_REVIEW_COMMENT
from app.core.whole_numbers import whole_number
from app.diagnosis.form import InvalidCaseInput, parse_diagnosis
from app.grading import case_reviews, round_reviews
from app.grading.models import Decision
from app.grading.revisions.models import DiagnosisRevision
from app.grading.rubric import InvalidReview, parse_review
from app.models.time import utcnow
from app.practice.round_models import DiagnosisRound
from app.web.field_errors import ErrorCollector
from drills.cases.contract import CaseSet
from drills.cases.registry import get_case
from drills.practice.round_answers import case_set_of
from drills.practice.rounds import get_variant

MAX_REVISIONS = 1000  # far more than a term asks for; bounds the number a form may carry


class RevisionRefused(Exception):
    """The learner may not send this revision now (409); the message says why."""


class RevisionReviewConflict(InvalidReview):
    """The revision is not open to this review (stale, or reviewed already): 409."""


@dataclass(frozen=True)
class Subject:
    """What is being revised: a revealed case attempt or an answered round."""

    case_attempt_id: int | None
    round_id: int | None
    learner_id: int
    first_diagnosis: dict[str, Any]  # as the learner first sent it (kept on the attempt/round)
    first_decision: str | None  # the decision of the review of the first diagnosis, if any
    case_set: CaseSet

    @property
    def filter(self) -> Any:
        if self.case_attempt_id is not None:
            return DiagnosisRevision.case_attempt_id == self.case_attempt_id
        return DiagnosisRevision.round_id == self.round_id


def case_subject(session: Session, case_attempt: CaseAttempt) -> Subject:
    assert case_attempt.id is not None
    review = case_reviews.review_of(session, case_attempt.id)
    return Subject(
        case_attempt_id=case_attempt.id,
        round_id=None,
        learner_id=case_attempt.learner_id,
        first_diagnosis=case_attempt.diagnosis or {},
        first_decision=review.decision if review else None,
        case_set=get_case(case_attempt.case_key).case_set,
    )


def round_subject(session: Session, diagnosis_round: DiagnosisRound) -> Subject:
    assert diagnosis_round.id is not None
    review = round_reviews.review_of(session, diagnosis_round.id)
    return Subject(
        case_attempt_id=None,
        round_id=diagnosis_round.id,
        learner_id=diagnosis_round.learner_id,
        first_diagnosis=diagnosis_round.diagnosis or {},
        first_decision=review.decision if review else None,
        case_set=case_set_of(get_variant(diagnosis_round.variant_key)),
    )


@dataclass(frozen=True)
class Thread:
    """A subject and its revisions, oldest first, as stored when it was read."""

    subject: Subject
    revisions: list[DiagnosisRevision]

    @property
    def latest(self) -> DiagnosisRevision | None:
        return self.revisions[-1] if self.revisions else None

    @property
    def decision(self) -> str | None:
        """The decision that stands: the latest revision's review, else the first review's."""
        return self.latest.decision if self.latest else self.subject.first_decision

    @property
    def pending(self) -> DiagnosisRevision | None:
        """The revision waiting for its review, if one is."""
        latest = self.latest
        return latest if latest is not None and latest.decision is None else None

    @property
    def open_to_revise(self) -> bool:
        return self.decision == Decision.changes_requested

    @property
    def next_number(self) -> int:
        return self.latest.number + 1 if self.latest else 1


def thread_of(session: Session, subject: Subject) -> Thread:
    rows = session.exec(
        select(DiagnosisRevision)
        .where(subject.filter)
        .order_by(col(DiagnosisRevision.number))
        .execution_options(populate_existing=True)
    ).all()
    return Thread(subject, list(rows))


def submit_revision(
    session: Session, thread: Thread, fields: Mapping[str, object]
) -> DiagnosisRevision:
    """Store the revision the form sends, numbered as the form says (`number`: the revision the
    learner wrote, so that a second copy of it, or a form written before the latest review, is
    refused rather than stored as the next one). Raises RevisionRefused (409) or
    InvalidCaseInput (422) before anything is stored."""
    subject = thread.subject
    number = whole_number(str(fields.get("number") or ""), maximum=MAX_REVISIONS)
    if number is None:
        raise InvalidCaseInput("number", "the form does not say which revision this is")
    if number < thread.next_number:
        raise RevisionRefused(
            f"Revision {number} was sent already; this copy was not stored. "
            "Reload the page to see where it stands."
        )
    refusal = _why_not_open(thread)
    if refusal:
        raise RevisionRefused(refusal)
    if number != thread.next_number:
        raise RevisionRefused(
            f"This form is for revision {number}, but the next one is revision "
            f"{thread.next_number}. Reload the page and write it there."
        )
    # The leading hypothesis stays the one first sent: it was scored before the reveal.
    leading = str(subject.first_diagnosis.get("leading") or "")
    problems = ErrorCollector()
    with problems.checking():
        diagnosis = parse_diagnosis(
            subject.case_set, {**fields, "leading": leading}, before="you send the revision"
        )
    note = str(fields.get("note") or "").strip()
    if len(note) > MAX_REVIEW_COMMENT:
        problems.add("note", f"keep the note under {MAX_REVIEW_COMMENT} characters")
    problems.raise_if_any(InvalidCaseInput)
    revision = DiagnosisRevision(
        case_attempt_id=subject.case_attempt_id,
        round_id=subject.round_id,
        learner_id=subject.learner_id,
        number=number,
        diagnosis={
            "leading": diagnosis.leading,
            "alternatives": list(diagnosis.alternatives),
            "first_test": diagnosis.first_test,
            "intervention": diagnosis.intervention,
            "confirmation": diagnosis.confirmation,
        },
        note=note,
    )
    session.add(revision)
    try:
        session.commit()
    except IntegrityError:
        # The same revision, sent twice at once: the unique (subject, number) kept the first.
        session.rollback()
        raise RevisionRefused(
            f"Revision {number} was sent already; this copy was not stored."
        ) from None
    session.refresh(revision)
    return revision


def _why_not_open(thread: Thread) -> str | None:
    pending = thread.pending
    if pending is not None:
        return (
            f"Revision {pending.number} is waiting for your instructor's review; you can revise "
            "again if they ask for changes."
        )
    if thread.decision is None:
        return "Your diagnosis has not been reviewed yet: there is nothing to revise."
    if thread.decision == Decision.accepted:
        return "Your instructor accepted this diagnosis: it is final."
    return None


def review_revision(
    session: Session,
    thread: Thread,
    *,
    number: int,
    reviewer: User,
    fields: Mapping[str, str],
) -> DiagnosisRevision:
    """Write the review of revision `number`: only the latest revision, only once. The form is
    checked whole first (InvalidReview, 422); then LookupError for a revision that does not
    exist, or RevisionReviewConflict (409). Nothing is stored when one is raised."""
    form = parse_review(fields, CASE_RUBRIC)
    revision = next((item for item in thread.revisions if item.number == number), None)
    if revision is None or revision.id is None:
        raise LookupError(f"No revision {number}.")
    latest = thread.latest
    assert latest is not None
    if latest.number != number:
        raise RevisionReviewConflict(
            "decision",
            f"Revision {number} is no longer the latest: the learner has sent revision "
            f"{latest.number} since. This review was not stored; review revision "
            f"{latest.number} instead.",
        )
    already = RevisionReviewConflict("decision", f"Revision {number} has already been reviewed.")
    if revision.decision is not None:
        raise already
    # Only a row still without a decision is updated: of two reviews sent at once, the first
    # writes and the second finds nothing to write.
    result = session.exec(
        update(DiagnosisRevision)
        .where(col(DiagnosisRevision.id) == revision.id, col(DiagnosisRevision.decision).is_(None))
        .values(
            decision=form.decision,
            scores=form.scores,
            comment=form.comment,
            reviewer_id=reviewer.id,
            reviewed_at=utcnow(),
        )
    )
    if result.rowcount != 1:
        session.rollback()
        raise already
    session.commit()
    session.refresh(revision)
    return revision
