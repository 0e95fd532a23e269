"""The instructor's review queue: pending submissions of the learners they may review, revealed
case attempts and answered curve rounds not yet reviewed, and revised diagnoses sent back for
review; the oldest of them all is next."""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from app.accounts.models import Role, User
from app.grading.case_reviews import unreviewed_cases
from app.grading.models import Submission, SubmissionStatus
from app.grading.revisions.queue import waiting_revisions
from app.grading.round_reviews import unreviewed_rounds
from app.web.access import learners_of


@dataclass(frozen=True)
class QueueItem:
    href: str  # its page, where the review form is
    title: str  # what it is, in words
    waiting_since: datetime


def pending_submissions(
    session: Session, *, reviewer: User, drill_slug: str = "", username: str = ""
) -> list[tuple[Submission, User]]:
    """Oldest first; an admin sees every learner's, an instructor their cohorts'. An empty
    filter matches everything."""
    query = select(Submission, User).join(User, col(User.id) == col(Submission.learner_id))
    query = query.where(Submission.status == SubmissionStatus.pending)
    if reviewer.role != Role.admin:
        query = query.where(col(Submission.learner_id).in_(learners_of(session, reviewer)))
    if drill_slug:
        query = query.where(Submission.drill_slug == drill_slug)
    if username:
        query = query.where(User.username == username)
    rows = session.exec(query.order_by(col(Submission.created_at), col(Submission.id))).all()
    return [(submission, learner) for submission, learner in rows]


def learners_reviewed_by(session: Session, *, reviewer: User) -> list[User]:
    """The learners a reviewer can filter the queue by, by username."""
    if reviewer.role == Role.admin:
        query = select(User).where(User.role == Role.learner)
    else:
        query = select(User).where(col(User.id).in_(learners_of(session, reviewer)))
    return sorted(session.exec(query).all(), key=lambda user: user.username)


def next_in_queue(session: Session, *, reviewer: User) -> QueueItem | None:
    """The item that has waited longest (a submission since it was sent, a case since its
    reveal), or None when nothing waits for this reviewer."""
    items: list[QueueItem] = []
    submissions = pending_submissions(session, reviewer=reviewer)
    if submissions:
        submission, learner = submissions[0]
        items.append(
            QueueItem(
                href=f"/submissions/{submission.id}#review",
                title=f"{learner.display_name}'s evidence for {submission.drill_slug}, "
                f"version {submission.version}",
                waiting_since=submission.created_at,
            )
        )
    cases = unreviewed_cases(session, reviewer=reviewer)
    if cases:
        case_attempt, learner = cases[0]
        assert case_attempt.revealed_at is not None
        items.append(
            QueueItem(
                href=f"/cases/attempts/{case_attempt.id}#case-review",
                title=f"{learner.display_name}'s case {case_attempt.case_key}, "
                f"attempt {case_attempt.number}",
                waiting_since=case_attempt.revealed_at,
            )
        )
    answered = unreviewed_rounds(session, reviewer=reviewer)
    if answered:
        diagnosis_round, learner = answered[0]
        assert diagnosis_round.answered_at is not None
        items.append(
            QueueItem(
                href=f"/practice/rounds/{diagnosis_round.id}#round-review",
                title=f"{learner.display_name}'s curve round of {diagnosis_round.day}, "
                f"number {diagnosis_round.number}",
                waiting_since=diagnosis_round.answered_at,
            )
        )
    revisions = waiting_revisions(session, reviewer=reviewer)
    if revisions:
        first = revisions[0]
        items.append(
            QueueItem(
                href=first.href,
                title=f"{first.learner.display_name}'s revision {first.revision.number} "
                f"of {first.what}",
                waiting_since=first.revision.created_at,
            )
        )
    return min(items, key=lambda item: item.waiting_since, default=None)
