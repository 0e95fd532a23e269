"""The instructor's review queue: pending submissions of the learners they may review."""

from sqlmodel import Session, col, select

from app.access import learners_of
from app.models import Role, Submission, SubmissionStatus, User


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
