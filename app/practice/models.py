"""A learner's own choices about the practice pages: today, whether their streak is shown.

No row means the defaults (the streak shown); a row is written the first time the learner
changes a choice.
"""

from sqlmodel import Field, SQLModel


class PracticeSettings(SQLModel, table=True):
    __tablename__ = "practice_settings"

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", unique=True, ondelete="CASCADE")
    show_streak: bool = True
