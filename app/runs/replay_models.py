"""Replays: an attempt's stored command run again in a worker, and how its numbers compared."""

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Column
from sqlmodel import Field, SQLModel

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class ReplayVerdict(StrEnum):
    identical = "identical"  # same metrics digest: bit-for-bit the same numbers
    within_tolerance = "within_tolerance"  # every value agrees within the relative tolerance
    differs = "differs"
    not_comparable = "not_comparable"  # the replay or the original produced no metrics


class ReplayStatus(StrEnum):
    queued = "queued"
    finished = "finished"
    failed = "failed"


class Replay(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", index=True, ondelete="CASCADE")
    requested_by: int = Field(foreign_key="user.id")
    status: str = Field(default=ReplayStatus.queued, max_length=16)  # ReplayStatus
    verdict: str | None = Field(default=None, max_length=20)
    digest: str | None = Field(default=None, max_length=64)
    # The largest relative difference seen, and where (e.g. "loss at step 120").
    max_relative_difference: float | None = None
    first_difference: str | None = Field(default=None, max_length=200)
    environment: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    error: str | None = Field(default=None, max_length=limits.MAX_ERROR_TEXT)
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
