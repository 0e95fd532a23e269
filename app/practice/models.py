"""Spaced review: one card per learner and review item, and the log of every review.

A card holds the item's FSRS schedule (drills/practice/scheduling.py) as a JSON document, with
its due time beside it as a column so "what is due" is one indexed query. A card exists once the
learner has reviewed the item, or once a miss of theirs has made one (a prediction a run did not
bear out, a case's cause named wrongly); the track's items that have no card yet are new.
"""

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class ReviewSource(StrEnum):
    track = "track"  # one of the track's items (drills/practice/items.py)
    cohort = "cohort"  # written by a cohort's instructor, for its learners
    drill_miss = "drill_miss"  # a drill run showed another failure than the learner predicted
    case_miss = "case_miss"  # a case revealed another cause than the one the learner named
    code_miss = "code_miss"  # a check the learner's edited exercise code failed


class ReviewRating(StrEnum):
    again = "again"
    hard = "hard"
    good = "good"
    easy = "easy"


class ReviewCard(SQLModel, table=True):
    __tablename__ = "review_card"
    __table_args__ = (UniqueConstraint("learner_id", "item_key", name="uq_review_card_item"),)

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True)
    # "track:<slug>", "drill-miss:<drill>:<hypothesis shown>", "case-miss:<case key>",
    # "code-miss:<exercise>:<check key>"
    item_key: str = Field(max_length=limits.MAX_ITEM_KEY)
    source: str = Field(max_length=16)  # ReviewSource
    # The latest miss that (re)opened it: the evidence its answer links to.
    attempt_id: int | None = Field(default=None, foreign_key="attempt.id")
    case_attempt_id: int | None = Field(default=None, foreign_key="case_attempt.id")
    # scheduling.to_json(...) parsed: None until the first review (a new card is due at once).
    schedule: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    due_at: datetime = Field(default_factory=utcnow, index=True)
    reviews: int = 0
    created_at: datetime = Field(default_factory=utcnow)


class ReviewLogEntry(SQLModel, table=True):
    """One review, kept as evidence: what the learner typed before seeing the model answer,
    how they rated their recall, and what the schedule did with it."""

    __tablename__ = "review_log"

    id: int | None = Field(default=None, primary_key=True)
    card_id: int = Field(foreign_key="review_card.id", index=True, ondelete="CASCADE")
    learner_id: int = Field(foreign_key="user.id", index=True)
    item_key: str = Field(max_length=limits.MAX_ITEM_KEY)
    answer: str = Field(max_length=limits.MAX_REVIEW_ANSWER)
    rating: str = Field(max_length=8)  # ReviewRating
    # Days since the card's previous review (None for the first): retention is read on
    # reviews made at least a day after the last one.
    elapsed_days: float | None = None
    retrievability: float | None = None  # FSRS's predicted recall at this review
    due_after: datetime
    reviewed_at: datetime = Field(default_factory=utcnow, index=True)


class CohortReviewItem(SQLModel, table=True):
    """A review question a cohort's instructor wrote for its learners (Markdown, rendered
    sanitised like every learner's text). Its key is "cohort:<id>"."""

    __tablename__ = "cohort_review_item"

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohort.id", index=True, ondelete="CASCADE")
    author_id: int = Field(foreign_key="user.id")
    prompt: str = Field(max_length=limits.MAX_REVIEW_PROMPT)
    answer: str = Field(max_length=limits.MAX_REVIEW_MODEL_ANSWER)
    created_at: datetime = Field(default_factory=utcnow)


# A learner's own choices about the practice pages (today: whether their streak is shown).
# No row means the defaults; a row is written the first time the learner changes a choice.
class PracticeSettings(SQLModel, table=True):
    __tablename__ = "practice_settings"

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", unique=True, ondelete="CASCADE")
    show_streak: bool = True
