"""Curve-diagnosis rounds: a learner is shown the curves of one real run of a drill variant,
without its knobs, and writes the five-part diagnosis (drills/practice/round_answers.py).

The draw (variant, seed, knobs) is stored when the round is opened, and its run is an ordinary
Attempt linked back here by `Attempt.round_id`, hidden from the drill's pages as a case's runs
are: its knobs and command name what the learner must find. The diagnosis and its score are
stored once, when the learner answers; only then are the variant and the knobs shown.
"""

from datetime import date, datetime
from typing import Any

from sqlalchemy import BigInteger, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class DiagnosisRound(SQLModel, table=True):
    __tablename__ = "diagnosis_round"
    __table_args__ = (
        UniqueConstraint("learner_id", "day", "number", name="uq_diagnosis_round_number"),
        UniqueConstraint("open_for", name="uq_diagnosis_round_open_for"),
    )

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True)
    day: date  # the learner's day (UTC) the round was drawn on: part of the draw
    number: int  # the learner's 1st, 2nd, ... round of that day: part of the draw
    variant_key: str = Field(max_length=limits.MAX_ITEM_KEY)  # "<drill>/<cause>": hidden
    drill_slug: str = Field(max_length=64)
    seed: int = Field(sa_type=BigInteger)
    knobs: dict[str, Any] = Field(sa_column=Column(JSONDocument, nullable=False))
    # The learner's id while the round waits for its answer; NULL once answered, or once its run
    # came to nothing. Unique: one open round per learner, however many presses or tabs.
    open_for: int | None = Field(default=None)
    # {"leading", "alternatives", "first_test", "intervention", "confirmation"} once answered
    diagnosis: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    # round_answers.RoundScore.as_dict() plus "observed", the run's diagnose() reading
    score: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    answered_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class RoundReview(SQLModel, table=True):
    """An instructor's review of an answered round (the case rubric, once per round)."""

    __tablename__ = "round_review"
    __table_args__ = (UniqueConstraint("round_id", name="uq_round_review_round"),)

    id: int | None = Field(default=None, primary_key=True)
    round_id: int = Field(foreign_key="diagnosis_round.id", ondelete="CASCADE")
    instructor_id: int = Field(foreign_key="user.id")
    decision: str = Field(max_length=20)  # Decision
    scores: dict[str, Any] = Field(sa_column=Column(JSONDocument, nullable=False))
    comment: str = Field(default="", max_length=limits.MAX_REVIEW_COMMENT)
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def total(self) -> int:
        return sum(int(item["score"]) for item in self.scores.values())
