"""An instructor's comments on a learner's exercise run, and the help ladder beside the run.

The run's page shows its reader when each rung of the help ladder was taken (so an instructor
sees whether a pass came after the solution), the comments written on the run, and to a
reviewer of the learner a box to write one. The learner reads them on their run.
"""

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.exercises.models import ExerciseRunComment
from app.exercises.service import SOLUTION_STEP, help_steps
from app.models.time import utcnow
from app.runs.models import Attempt
from app.web.access import can_review_work_of

MAX_COMMENT = 4000  # characters: a paragraph or two on one run


class InvalidComment(ValueError):
    """The comment is empty or too long."""


def add_comment(
    session: Session, *, attempt: Attempt, author: User, body: object
) -> ExerciseRunComment:
    """Store a reviewer's comment on the run (the caller checked they may review it)."""
    if not isinstance(body, str) or not body.strip():
        raise InvalidComment("Write the comment first: it is empty.")
    if len(body) > MAX_COMMENT:
        raise InvalidComment(f"Keep the comment under {MAX_COMMENT:,} characters.")
    assert attempt.id is not None
    comment = ExerciseRunComment(
        attempt_id=attempt.id, author_id=author.saved_id, body=body.strip(), created_at=utcnow()
    )
    session.add(comment)
    session.commit()
    session.refresh(comment)
    return comment


def comments_of(session: Session, attempt: Attempt) -> list[tuple[ExerciseRunComment, User]]:
    rows = session.exec(
        select(ExerciseRunComment, User)
        .join(User, col(User.id) == col(ExerciseRunComment.author_id))
        .where(ExerciseRunComment.attempt_id == attempt.id)
        .order_by(col(ExerciseRunComment.created_at), col(ExerciseRunComment.id))
    ).all()
    return [(comment, author) for comment, author in rows]


def ladder_of(session: Session, attempt: Attempt) -> list[dict[str, Any]]:
    """The rungs the run's learner took on its exercise, each with its time and whether it
    was taken before this run started."""
    assert attempt.exercise_slug is not None
    started: datetime = attempt.created_at
    return [
        {
            "step": step.step,
            "label": "the solution"
            if step.step == SOLUTION_STEP
            else "hint " + step.step.removeprefix("hint-"),
            "taken_at": step.taken_at,
            "before_run": step.taken_at <= started,
        }
        for step in help_steps(
            session, learner_id=attempt.learner_id, exercise_slug=attempt.exercise_slug
        )
    ]


def teaching_context(session: Session, *, attempt: Attempt, viewer: User) -> dict[str, Any]:
    return {
        "ladder": ladder_of(session, attempt),
        "comments": comments_of(session, attempt),
        "can_comment": can_review_work_of(session, viewer, attempt.learner_id),
        "comment_limit": MAX_COMMENT,
    }
