"""An instructor's saved review comments: their own list of phrasings they reuse in reviews.

Each instructor keeps their own list (never shared, never seen by learners); a review form
offers it beside the overall comment. The text's sha256 keeps a double submit of the same
comment to one row.
"""

from datetime import datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.time import utcnow


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
