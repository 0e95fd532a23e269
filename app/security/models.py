"""Failed logins, kept in the database so that every web process sees the same counts and a
restart does not wipe them. Only a hash of what was tried is kept: never the raw name or address,
and never more than a fixed number of bytes per failure whatever was posted."""

from datetime import datetime

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from app.models.time import utcnow


class LoginFailure(SQLModel, table=True):
    __tablename__ = "login_failure"
    __table_args__ = (Index("ix_login_failure_scope_key_at", "scope", "key_hash", "failed_at"),)

    id: int | None = Field(default=None, primary_key=True)
    # "name" (the username tried), "client" (the address the request came from) or "pair" (that
    # name from that address); see app/security/throttle.py.
    scope: str = Field(max_length=8)
    # sha256 hex of the lower-cased name, the client address, or both.
    key_hash: str = Field(max_length=64)
    failed_at: datetime = Field(default_factory=utcnow, index=True)
