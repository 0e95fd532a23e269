"""An assignment: a titled set of items (drills, cases, curve rounds, code exercises) an
instructor sets one of their cohorts, due at a moment in UTC.

The items are kept as a JSON list of {"kind", "key"} pairs (app/assignments/items.py says what
each kind's key is); the list is small (at most MAX_ITEMS) and always read whole. `version` counts
the edits, so an edit made from a form another edit has since overtaken is refused (409), not
silently written over it.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument

MAX_TITLE = limits.MAX_ASSIGNMENT_TITLE
MAX_ITEMS = 40  # well below the form parser's 64 fields (app/web/forms.py)


class Assignment(SQLModel, table=True):
    __tablename__ = "assignment"
    # A cohort's titles are unique: a double-pressed "Set" stores one assignment, and learners
    # never see two alike.
    __table_args__ = (UniqueConstraint("cohort_id", "title", name="uq_assignment_title"),)

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohort.id", index=True, ondelete="CASCADE")
    author_id: int = Field(foreign_key="user.id")
    title: str = Field(max_length=MAX_TITLE)
    due_at: datetime
    items: list[dict[str, Any]] = Field(sa_column=Column(JSONDocument, nullable=False))
    version: int = 1
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
