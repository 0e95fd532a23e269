"""A learner's attempt at a case, and the runs it made.

The draw (the hidden cause, drawn from the case's look-alikes, and the seed and knobs that plant
it) is stored when the case is opened; the diagnosis is stored before the first experiment and
never changes after it; the verdict, the fix and the score are stored once. Every run is an
ordinary Attempt (dispatched, streamed and kept like any other) linked here, and hidden from the
learner's drill pages: its knobs name the cause."""

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument

DEFAULT_CASE_BUDGET = 3


class CaseStage(StrEnum):
    diagnosing = "diagnosing"  # the symptom run is shown; no diagnosis yet
    investigating = "investigating"  # diagnosis stored: experiments may be run
    fixing = "fixing"  # cause named, a fix chosen: its run decides
    revealed = "revealed"  # the fix run ended: truth, replay commands and score shown


class CaseRunKind(StrEnum):
    symptom = "symptom"
    experiment = "experiment"
    fix = "fix"


class CaseAttempt(SQLModel, table=True):
    __tablename__ = "case_attempt"
    __table_args__ = (
        UniqueConstraint("learner_id", "case_key", "number", name="uq_case_attempt_number"),
    )

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True)
    case_key: str = Field(max_length=64, index=True)
    number: int  # this learner's 1st, 2nd, ... attempt at the case: part of the draw
    # The cause this attempt's draw planted (a key of the case set): never sent before the reveal.
    cause: str = Field(max_length=64)
    seed: int = Field(sa_type=BigInteger)
    knobs: dict[str, Any] = Field(sa_column=Column(JSONDocument, nullable=False))
    budget: int = DEFAULT_CASE_BUDGET
    stage: str = Field(default=CaseStage.diagnosing, max_length=16)  # CaseStage
    # {"leading", "alternatives", "first_test", "intervention", "confirmation"}
    diagnosis: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    diagnosed_at: datetime | None = None
    named_cause: str | None = Field(default=None, max_length=64)
    fix_key: str | None = Field(default=None, max_length=64)
    verdict_at: datetime | None = None
    # CaseScore.as_dict() once revealed
    score: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    revealed_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class CaseRun(SQLModel, table=True):
    __tablename__ = "case_run"
    __table_args__ = (UniqueConstraint("attempt_id", name="uq_case_run_attempt"),)

    id: int | None = Field(default=None, primary_key=True)
    case_attempt_id: int = Field(foreign_key="case_attempt.id", index=True, ondelete="CASCADE")
    attempt_id: int = Field(foreign_key="attempt.id", ondelete="CASCADE")
    kind: str = Field(max_length=16)  # CaseRunKind
    experiment_key: str | None = Field(default=None, max_length=limits.MAX_CASE_KEY)
    created_at: datetime = Field(default_factory=utcnow)


# What an instructor scores a revealed case on (0-2 each), beyond what the runs scored.
CASE_RUBRIC: tuple[tuple[str, str], ...] = (
    ("alternatives", "Weighed plausible alternatives, not only the first idea"),
    ("test_choice", "Chose a first test that could tell the hypotheses apart"),
    ("verification", "Named specific evidence that would confirm the fix"),
)
# What a 0, a 1 and a 2 mean on each case criterion (see RUBRIC_LEVELS).
CASE_RUBRIC_LEVELS: dict[str, tuple[str, str, str]] = {
    "alternatives": (
        "named no alternative, or only implausible ones",
        "named an alternative without saying how it would differ",
        "named plausible alternatives and what would tell them apart",
    ),
    "test_choice": (
        "the first test could not separate the hypotheses",
        "the test separates some causes, not the leading one from its rivals",
        "the first test separates the leading hypothesis from each alternative",
    ),
    "verification": (
        'no evidence named, or only "it works"',
        "names a signal, not the value or shape that would confirm the fix",
        "names the curve or number and what it should show once fixed",
    ),
}


class CaseReview(SQLModel, table=True):
    """An instructor's review of a revealed case attempt: one per attempt (the database refuses a
    second, as for submissions)."""

    __tablename__ = "case_review"
    __table_args__ = (UniqueConstraint("case_attempt_id", name="uq_case_review_attempt"),)

    id: int | None = Field(default=None, primary_key=True)
    case_attempt_id: int = Field(foreign_key="case_attempt.id", ondelete="CASCADE")
    instructor_id: int = Field(foreign_key="user.id")
    decision: str = Field(max_length=20)  # Decision
    # {criterion: {"score": 0-2, "comment": str}} for every CASE_RUBRIC criterion.
    scores: dict[str, Any] = Field(sa_column=Column(JSONDocument, nullable=False))
    comment: str = Field(default="", max_length=limits.MAX_REVIEW_COMMENT)
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def total(self) -> int:
        return sum(int(item["score"]) for item in self.scores.values())
