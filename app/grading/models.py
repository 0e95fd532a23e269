"""Evidence submitted for review, and the instructor's decisions on it.

A resubmission is a new Submission with the next version number, so every earlier version and its
review stay readable. Review is shaped like nbgrader's Grade: per-criterion scores, an overall
comment and a decision.
"""

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class SubmissionStatus(StrEnum):
    pending = "pending"
    accepted = "accepted"
    changes_requested = "changes_requested"


class Decision(StrEnum):
    accepted = "accepted"
    changes_requested = "changes_requested"


# The rubric every submission is scored on (0-2 each), in the order the review page shows it.
RUBRIC: tuple[tuple[str, str], ...] = (
    ("mechanism", "Explains the mechanism and the state it reads or changes"),
    ("when_to_use", "Says when the technique is the right tool and when it is not"),
    ("honest_prediction", "Made the prediction before the run and compared it honestly"),
    ("connects", "Connects the result to something they built"),
)
# What a 0, a 1 and a 2 mean on each criterion: one line each, shown in the review form and
# beside every score given.
RUBRIC_LEVELS: dict[str, tuple[str, str, str]] = {
    "mechanism": (
        "names the symptom only, or gets the mechanism wrong",
        "describes the mechanism but not the state it reads or changes",
        "explains the mechanism and the exact state it reads or changes",
    ),
    "when_to_use": (
        "gives no situation, or only generic advice",
        "gives one concrete situation, for or against, not both",
        "gives a concrete case where it fits and one where it misleads",
    ),
    "honest_prediction": (
        "no real prediction, or the comparison glosses over a miss",
        "a prediction was made, but the comparison with the run is vague",
        "a specific prediction, set against the evidence, misses owned",
    ),
    "connects": (
        "stays inside the drill",
        "mentions their own work in passing",
        "says what they would check or change in something they built",
    ),
}


class Submission(SQLModel, table=True):
    __table_args__ = (
        UniqueConstraint("learner_id", "drill_slug", "version", name="uq_submission_version"),
    )

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True)
    drill_slug: str = Field(max_length=64, index=True)
    version: int = Field(default=1)
    status: str = Field(default=SubmissionStatus.pending, max_length=20, index=True)
    failed_attempt_id: int = Field(foreign_key="attempt.id")
    fixed_attempt_id: int = Field(foreign_key="attempt.id")
    # The explain-back, as Markdown (rendered sanitised).
    mechanism: str = Field(max_length=limits.MAX_SUBMISSION_TEXT)
    right_tool: str = Field(max_length=limits.MAX_SUBMISSION_TEXT)
    wrong_tool: str = Field(max_length=limits.MAX_SUBMISSION_TEXT)
    next_check: str = Field(max_length=limits.MAX_SUBMISSION_TEXT)
    created_at: datetime = Field(default_factory=utcnow)


class Review(SQLModel, table=True):
    # One decision per submitted version: a second one (a double click, two tabs) is refused by
    # the database itself, not only by the status check before it.
    __table_args__ = (UniqueConstraint("submission_id", name="uq_review_submission"),)

    id: int | None = Field(default=None, primary_key=True)
    submission_id: int = Field(foreign_key="submission.id", index=True, ondelete="CASCADE")
    instructor_id: int = Field(foreign_key="user.id")
    decision: str = Field(max_length=20)
    # {criterion: {"score": 0-2, "comment": str}} for every RUBRIC criterion.
    scores: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONDocument, nullable=False)
    )
    comment: str = Field(default="", max_length=limits.MAX_REVIEW_COMMENT)
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def total(self) -> int:
        return sum(int(item["score"]) for item in self.scores.values())

    @property
    def rubric_scores(self) -> list[tuple[str, Any]]:
        """(criterion, score) in RUBRIC order, the order they were given in: PostgreSQL's JSONB
        hands keys back in an order of its own. A criterion since retired comes last."""
        position = {key: index for index, (key, _label) in enumerate(RUBRIC)}
        return sorted(self.scores.items(), key=lambda item: position.get(item[0], len(position)))


# An instructor's saved review comments: their own list of phrasings they reuse in reviews.
# Never shared, never shown to learners; the text's sha256 keeps a double submit to one row.
class SavedComment(SQLModel, table=True):
    __tablename__ = "saved_comment"
    __table_args__ = (UniqueConstraint("owner_id", "text_sha256"),)

    id: int | None = Field(default=None, primary_key=True)
    owner_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    text: str = Field(sa_column=Column(Text, nullable=False))
    # The same text twice in one list is refused: compared by digest, as a long text column
    # cannot carry a unique index on PostgreSQL.
    text_sha256: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
