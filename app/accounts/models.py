"""People and groups: users with a role, cohorts an instructor runs, learners' memberships."""

from datetime import datetime
from enum import StrEnum

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow


class Role(StrEnum):
    learner = "learner"
    instructor = "instructor"
    admin = "admin"


# The largest id a row can have (a signed 64-bit integer in SQLite and PostgreSQL): a larger one
# read from a request is refused before it reaches the driver, which would overflow.
MAX_ROW_ID = 2**63 - 1

# The skeleton's single local learner (id 1). Its attempts are kept; it has no password until an
# admin sets one with `python -m app set-password local-learner`.
LOCAL_LEARNER_ID = 1


class User(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(max_length=64, unique=True, index=True)
    display_name: str = Field(max_length=limits.MAX_DISPLAY_NAME)
    role: str = Field(default=Role.learner, max_length=16)
    # argon2id hash (pwdlib); None means the account cannot log in.
    password_hash: str | None = Field(default=None, max_length=255)
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def saved_id(self) -> int:
        """The id of a user loaded from the database (never None there)."""
        assert self.id is not None, "user not saved yet"
        return self.id


class Cohort(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=limits.MAX_COHORT_NAME)
    join_code: str = Field(max_length=limits.MAX_JOIN_CODE, unique=True, index=True)
    instructor_id: int = Field(foreign_key="user.id", index=True)
    created_at: datetime = Field(default_factory=utcnow)
    # Experiments a learner of the cohort may run per case before naming the cause.
    case_budget: int = 3


class CohortMembership(SQLModel, table=True):
    __tablename__ = "cohort_membership"
    __table_args__ = (UniqueConstraint("cohort_id", "learner_id", name="uq_cohort_learner"),)

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohort.id", index=True, ondelete="CASCADE")
    learner_id: int = Field(foreign_key="user.id", index=True)
    joined_at: datetime = Field(default_factory=utcnow)


class LoginSession(SQLModel, table=True):
    """A logged-in browser. The cookie holds a random token; only its hash is stored, and logging
    out deletes the row, so a copied cookie stops working at logout."""

    __tablename__ = "login_session"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)
