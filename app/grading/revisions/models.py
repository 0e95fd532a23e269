"""A revised diagnosis: the words of a case attempt or curve round written again after an
instructor asked for changes, and that instructor's review of it.

A revision never replaces what came before: the diagnosis as first sent stays on its attempt or
round, and each revision is a new row numbered 1, 2, ... per attempt or round (unique, so of two
copies of the same revision sent at once one is stored). The review of a revision lives on the
revision's own row: it is written once, by an UPDATE that only finds the row while its decision is
still empty, which makes a second review of the same revision store nothing.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class DiagnosisRevision(SQLModel, table=True):
    __tablename__ = "diagnosis_revision"
    __table_args__ = (
        # One of the two: a revision answers a case attempt's review or a round's, never both.
        CheckConstraint(
            "(case_attempt_id IS NULL) <> (round_id IS NULL)", name="revises_one_thing"
        ),
        UniqueConstraint("case_attempt_id", "number"),
        UniqueConstraint("round_id", "number"),
    )

    id: int | None = Field(default=None, primary_key=True)
    case_attempt_id: int | None = Field(
        default=None, foreign_key="case_attempt.id", ondelete="CASCADE"
    )
    round_id: int | None = Field(default=None, foreign_key="diagnosis_round.id", ondelete="CASCADE")
    # Whose work it is (the attempt's or round's learner): the review queue filters on it.
    learner_id: int = Field(foreign_key="user.id", index=True)
    number: int  # 1 for the first revision of this attempt or round, then 2, ...
    # The five parts, as a diagnosis is stored; the leading hypothesis is the one first sent
    # (it was scored before the truth was shown, so a revision cannot change it).
    diagnosis: dict[str, Any] = Field(sa_column=Column(JSONDocument, nullable=False))
    # The learner's reply to the review: what they changed and why (may be empty).
    note: str = Field(default="", max_length=limits.MAX_REVIEW_COMMENT)
    created_at: datetime = Field(default_factory=utcnow)
    # The instructor's review of this revision, once written (CASE_RUBRIC scores, as CaseReview).
    decision: str | None = Field(default=None, max_length=20)  # Decision
    scores: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    comment: str = Field(default="", max_length=limits.MAX_REVIEW_COMMENT)
    reviewer_id: int | None = Field(default=None, foreign_key="user.id")
    reviewed_at: datetime | None = None

    @property
    def total(self) -> int:
        return sum(int(item["score"]) for item in (self.scores or {}).values())
