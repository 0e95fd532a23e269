"""What an exercise run keeps beside its attempt, and what a learner has taken of the help.

An exercise run is an Attempt (queued, streamed, ended and housekept like every run) whose
`exercise_slug` is set; this row holds the rest: the code exactly as submitted, its sha256 and
diff from the starter, the judge's checks and the sandbox's output (capped), and how much help
the learner had taken when they ran it.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.time import utcnow
from app.models.types import JSONDocument

MAX_CODE = 64_000  # characters (as drills.exercises.judge takes): a starter is ~2 KB
MAX_OUTPUT = 16 * 1024  # characters of stdout and of stderr kept (the sandbox caps them first)


class ExerciseRun(SQLModel, table=True):
    __tablename__ = "exercise_run"

    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", unique=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=64, index=True)
    code: str = Field(sa_column=Column(Text, nullable=False))
    code_sha256: str = Field(max_length=64)
    diff: str = Field(sa_column=Column(Text, nullable=False))  # unified, starter -> code
    # Help taken before this run: the hint ladder's rungs, and whether the solution was shown.
    hints_taken: int = 0
    solution_shown: bool = False
    # The judgement, once the run has ended: "passed", "failed", "error" or "not-attempted".
    judgement: str | None = Field(default=None, max_length=16)
    checks: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSONDocument))
    stdout: str | None = Field(default=None, sa_column=Column(Text))
    stderr: str | None = Field(default=None, sa_column=Column(Text))


class ExerciseHelp(SQLModel, table=True):
    """One learner's help on one exercise: hints are revealed in order and stay revealed."""

    __tablename__ = "exercise_help"
    __table_args__ = (UniqueConstraint("learner_id", "exercise_slug"),)

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=64)
    hints_taken: int = 0
    solution_shown_at: datetime | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class ExerciseHelpStep(SQLModel, table=True):
    """One rung of the help ladder a learner took, with its time: "hint-1", "hint-2", ...,
    "solution". A rung is taken once; its row says when."""

    __tablename__ = "exercise_help_step"
    __table_args__ = (UniqueConstraint("learner_id", "exercise_slug", "step"),)

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=64)
    step: str = Field(max_length=16)
    taken_at: datetime = Field(default_factory=utcnow)


class ExerciseRunComment(SQLModel, table=True):
    """An instructor's comment on a learner's exercise run: the learner reads it on the run."""

    __tablename__ = "exercise_run_comment"

    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", index=True, ondelete="CASCADE")
    author_id: int = Field(foreign_key="user.id")
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
