"""Evidence records. Every run is an Attempt, kept whatever its outcome.

JSON columns hold what the drill reported, so a new drill never needs a migration.
"""

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Index,
    UniqueConstraint,
    and_,
    false,
    text,
)
from sqlmodel import Field, SQLModel, col

from app.core import limits
from app.models.time import utcnow
from app.models.types import JSONDocument


class AttemptStatus(StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    timed_out = "timed_out"
    resource_limit = "resource_limit"
    # Stopped by its learner: kept as evidence, with the points it reported before it stopped.
    cancelled = "cancelled"

    @property
    def is_final(self) -> bool:
        return self not in (AttemptStatus.queued, AttemptStatus.running)

    @classmethod
    def of_run(cls, run_status: str) -> "AttemptStatus":
        """The attempt status for a drill record's status (`drills.core.runner.run_drill` says
        "ok", "error", "timed_out" or "resource_limit"); anything else is a failure."""
        return _RUN_STATUS.get(run_status, cls.failed)


# The one translation between the drills' record vocabulary and the attempt's.
_RUN_STATUS = {
    "ok": AttemptStatus.succeeded,
    "error": AttemptStatus.failed,
    "timed_out": AttemptStatus.timed_out,
    "resource_limit": AttemptStatus.resource_limit,
    "cancelled": AttemptStatus.cancelled,
}


class Attempt(SQLModel, table=True):
    # One run per request key and learner (migration 0019): the database holds it, so a double
    # submit answers with the first run in whichever web process the second press lands.
    __table_args__ = (UniqueConstraint("learner_id", "request_key"),)

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="user.id", index=True)
    drill_slug: str = Field(max_length=64, index=True)
    drill_version: str = Field(max_length=16)
    # The prediction is written once, with the attempt, before the run is dispatched.
    hypothesis: str = Field(max_length=64)
    prediction_text: str = Field(max_length=limits.MAX_PREDICTION)
    predicted_at: datetime = Field(default_factory=utcnow)
    # The numbers predicted with it ({signature key: value}, only the drill's declared keys),
    # and, once the run has finished, each one's score: true/false, or null when the run
    # reported no such number. Scored with the bands of the drill version that ran.
    numeric_predictions: dict[str, float] = Field(
        default_factory=dict,
        sa_column=Column(JSONDocument, nullable=False, server_default=text("'{}'")),
    )
    numeric_matched: dict[str, bool | None] | None = Field(
        default=None, sa_column=Column(JSONDocument)
    )
    knobs: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONDocument, nullable=False)
    )
    seed: int = Field(sa_type=BigInteger)  # up to drills.core.seed.MAX_SEED
    command: str = Field(max_length=1000)
    status: str = Field(default=AttemptStatus.queued, max_length=16, index=True)  # AttemptStatus
    error: str | None = Field(default=None, max_length=limits.MAX_ERROR_TEXT)
    environment: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    inputs: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    diagnostics: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    signature: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONDocument))
    observed_hypothesis: str | None = Field(default=None, max_length=64)
    digest: str | None = Field(default=None, max_length=64)
    worker: str | None = Field(default=None, max_length=200)
    # The scheduler the run was sent to (its Dask id): an unfinished attempt of another scheduler
    # was lost when the cluster restarted. None while the run is held back (app/runs/fair_share.py):
    # app/runs/backlog.py sets it when it sends the run.
    scheduler_id: str | None = Field(default=None, max_length=100)
    # How many of its learner's runs were unfinished when it was stored: runs start in turn
    # order, then in the order they came (app/runs/fair_share.py).
    queue_turn: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # A run made inside a case (its symptom, an experiment, a fix): its knobs name the hidden
    # cause, so it is shown only through the case's own pages, never among the drill's attempts.
    case_attempt_id: int | None = Field(
        default=None, foreign_key="case_attempt.id", index=True, ondelete="CASCADE"
    )
    # A curve-diagnosis round's run: hidden the same way until its learner has answered.
    round_id: int | None = Field(
        default=None, foreign_key="diagnosis_round.id", index=True, ondelete="CASCADE"
    )
    # An exercise's run (app/exercises): the learner's code, judged in a sandbox. Shown through
    # the exercise's pages, never among the drill's attempts (it made no prediction).
    exercise_slug: str | None = Field(default=None, max_length=64, index=True)
    # The one-time token of the drill form that sent it (or an API client's Idempotency-Key):
    # the same key sent again answers with this run instead of starting another
    # (app/runs/attempts.py).
    request_key: str | None = Field(default=None, max_length=limits.MAX_REQUEST_KEY)
    # A hidden-bug run (drills/practice/hidden_setups.py): the app drew its knobs and seed, and
    # shows them once the run has ended, not before (`setup_concealed`).
    hidden_setup: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Written by the worker every second while it runs: a running attempt whose heartbeat has
    # stopped lost its worker, whichever web process (if any) is still there to hear of it.
    heartbeat_at: datetime | None = None
    # Set by the learner's cancel; the worker reads it with its heartbeat and stops the run.
    cancel_requested_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow, index=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    compute_s: float | None = None

    @property
    def final(self) -> bool:
        return AttemptStatus(self.status).is_final

    @property
    def held(self) -> bool:
        """Stored but sent to no scheduler yet: waiting in the backlog (app/runs/fair_share.py)."""
        return self.status == AttemptStatus.queued and self.scheduler_id is None

    @property
    def is_drill_page_run(self) -> bool:
        """Whether the run was made on a drill's page, not inside a case or a round (whose
        runs are read only through their own pages: their knobs name what is hidden) nor as an
        exercise's run (code, not a prediction)."""
        return self.case_attempt_id is None and self.round_id is None and self.exercise_slug is None

    @property
    def setup_concealed(self) -> bool:
        """A hidden-bug run still in flight: its knobs, seed and replay command (which name the
        setup the learner is predicting) are withheld from every page, API answer and export."""
        return self.hidden_setup and not self.final

    @property
    def prediction_matched(self) -> bool | None:
        if self.observed_hypothesis is None:
            return None
        return self.observed_hypothesis == self.hypothesis


class MetricPoint(SQLModel, table=True):
    """One value of one metric at one step, stored as it streams in from the worker."""

    __tablename__ = "metric_point"
    # Every reader wants one attempt's points after a cursor, in id order (migration 0015).
    __table_args__ = (Index("ix_metric_point_attempt_id_id", "attempt_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", ondelete="CASCADE")
    name: str = Field(max_length=64)
    step: int
    # None stands for a non-finite value (JSON has no NaN); the drill's signature says which.
    value: float | None


class Explanation(SQLModel, table=True):
    """The learner's explain-back for an attempt. Each save is a new row, so history is kept."""

    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", index=True, ondelete="CASCADE")
    learner_id: int = Field(foreign_key="user.id")
    mechanism: str = Field(max_length=limits.MAX_EXPLAIN_BACK)
    right_tool: str = Field(max_length=limits.MAX_EXPLAIN_BACK)
    wrong_tool: str = Field(max_length=limits.MAX_EXPLAIN_BACK)
    next_check: str = Field(max_length=limits.MAX_EXPLAIN_BACK)
    created_at: datetime = Field(default_factory=utcnow)


def drill_page_runs() -> ColumnElement[bool]:
    """The SQL condition of Attempt.is_drill_page_run: use it wherever a drill's attempts are
    listed, counted or exported."""
    return and_(
        col(Attempt.case_attempt_id).is_(None),
        col(Attempt.round_id).is_(None),
        col(Attempt.exercise_slug).is_(None),
    )
