"""Code submissions in the review queue: the judged exercise runs of the learners a reviewer may
review (passed or failed; a run the judge could not finish has nothing to read), newest first,
each linking to its page (the diff from the starter, the checks, the comment box)."""

from dataclasses import dataclass

from sqlmodel import Session, col, func, select

from app.accounts.models import Role, User
from app.exercises.models import ExerciseRun, ExerciseRunComment
from app.runs.models import Attempt
from app.web.access import learners_of

# Runs listed at most: the queue is a starting point, the cohort page has every learner's grid.
MAX_LISTED = 50
READABLE = ("passed", "failed")


@dataclass(frozen=True)
class CodeSubmission:
    attempt: Attempt
    run: ExerciseRun
    learner: User
    comments: int

    @property
    def href(self) -> str:
        return f"/exercises/{self.run.exercise_slug}/runs/{self.attempt.id}"


def code_submissions(session: Session, *, reviewer: User) -> list[CodeSubmission]:
    """An admin sees every learner's runs, an instructor their cohorts' learners'."""
    comments = (
        select(func.count())
        .select_from(ExerciseRunComment)
        .where(col(ExerciseRunComment.attempt_id) == col(Attempt.id))
        .scalar_subquery()
    )
    query = (
        select(Attempt, ExerciseRun, User, comments)
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == col(Attempt.id))
        .join(User, col(User.id) == col(Attempt.learner_id))
        .where(col(ExerciseRun.judgement).in_(READABLE))
    )
    if reviewer.role != Role.admin:
        query = query.where(col(Attempt.learner_id).in_(learners_of(session, reviewer)))
    else:
        query = query.where(col(Attempt.learner_id) != reviewer.id)
    rows = session.exec(query.order_by(col(Attempt.id).desc()).limit(MAX_LISTED)).all()
    return [
        CodeSubmission(attempt, run, learner, int(count)) for attempt, run, learner, count in rows
    ]
