"""The housekeeping: each unfinished attempt judged from its row and the pool, by one web process
at a time (the leader), so every ending is decided once."""

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app.core.config import Settings
from app.core.db import make_engine
from app.models.time import utcnow
from app.runner.dispatcher import WORKER_LOST
from app.runs.housekeeping import CLUSTER_RESTARTED, Housekeeping, ending_for
from app.runs.leadership import FileLock, leadership_for
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import add_unfinished_attempt
from tests.postgres import throwaway_database

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=utcnow().tzinfo)
SETTINGS = Settings(
    time_limit_s=60,
    watchdog_grace_s=5,
    heartbeat_timeout_s=20,
    queue_timeout_s=600,
    no_worker_grace_s=30,
)


def attempt(status: AttemptStatus = AttemptStatus.running, **times: Any) -> Attempt:
    defaults: dict[str, Any] = {
        "created_at": NOW - timedelta(seconds=10),
        "started_at": NOW - timedelta(seconds=5) if status == AttemptStatus.running else None,
        "heartbeat_at": NOW - timedelta(seconds=1) if status == AttemptStatus.running else None,
        "scheduler_id": "scheduler-1",
        "worker": "tls://worker-1",
    }
    return Attempt(
        learner_id=1,
        drill_slug="overfit-one-batch",
        drill_version="1",
        hypothesis="fits",
        prediction_text="zero",
        knobs={},
        seed=0,
        command="python -m drills run overfit-one-batch --seed 0",
        status=status,
        **(defaults | times),
    )


def ending_of(row: Attempt, *, scheduler: str | None = "scheduler-1", empty_for: float = 0) -> Any:
    return ending_for(
        row, now=NOW, scheduler_id=scheduler, no_worker_for_s=empty_for, settings=SETTINGS
    )


def test_a_healthy_run_and_a_fresh_queue_entry_are_left_alone() -> None:
    assert ending_of(attempt()) is None
    assert ending_of(attempt(AttemptStatus.queued)) is None
    # The scheduler cannot be asked right now: nothing is judged by it.
    assert ending_of(attempt(scheduler_id="scheduler-0"), scheduler=None) is None


def test_an_attempt_of_another_scheduler_was_lost_with_it() -> None:
    for status in (AttemptStatus.queued, AttemptStatus.running):
        ending = ending_of(attempt(status, scheduler_id="scheduler-0"))
        assert (ending.status, ending.reason) == (AttemptStatus.failed, CLUSTER_RESTARTED)
    assert ending_of(attempt(scheduler_id=None)).reason == CLUSTER_RESTARTED


def test_a_silent_worker_is_a_lost_one_and_a_cancelled_run_stays_cancelled() -> None:
    silent = attempt(heartbeat_at=NOW - timedelta(seconds=21))
    assert (ending_of(silent).status, ending_of(silent).reason) == (
        AttemptStatus.failed,
        WORKER_LOST,
    )
    assert ending_of(attempt(heartbeat_at=NOW - timedelta(seconds=19))) is None
    asked = attempt(heartbeat_at=NOW - timedelta(seconds=21), cancel_requested_at=NOW)
    assert ending_of(asked).status == AttemptStatus.cancelled


def test_a_run_past_its_time_limit_is_stopped_and_its_worker_replaced() -> None:
    ending = ending_of(attempt(started_at=NOW - timedelta(seconds=66)))
    assert ending.status == AttemptStatus.timed_out and "60 s" in ending.reason
    assert ending.restart_worker == "tls://worker-1"
    assert ending_of(attempt(started_at=NOW - timedelta(seconds=64))) is None


def test_a_queue_entry_ends_when_no_worker_can_take_it() -> None:
    old = attempt(AttemptStatus.queued, created_at=NOW - timedelta(seconds=601))
    assert "within 600 s" in ending_of(old).reason
    assert (
        "No worker has been available"
        in ending_of(attempt(AttemptStatus.queued), empty_for=31).reason
    )
    # A running attempt is not judged by the pool: its heartbeat says whether it lives.
    assert ending_of(attempt(), empty_for=31) is None


class FakeRunner:
    scheduler_id = "scheduler-1"

    def __init__(self) -> None:
        self.restarted: list[str] = []

    def no_worker_for(self) -> float:
        return 0.0

    def restart_worker(self, address: str) -> None:
        self.restarted.append(address)


def sweepers(engine: Engine, database_url: str, count: int) -> list[Housekeeping]:
    return [
        Housekeeping(engine, FakeRunner(), SETTINGS, leadership_for(database_url))  # type: ignore[arg-type]
        for _ in range(count)
    ]


def check_one_leader_acts(engine: Engine, database_url: str) -> None:
    lost = add_unfinished_attempt(engine, status=AttemptStatus.running, scheduler_id="gone")
    first, second = sweepers(engine, database_url, 2)
    try:
        ended = []
        for housekeeping in (first, second, first, second):
            if housekeeping._leadership.held():
                ended += housekeeping.sweep()
        assert ended == [lost]
        assert not second._leadership.held()
        # The leader goes away: the other takes over at its next try.
        first.stop()
        assert second._leadership.held()
    finally:
        first.stop()
        second.stop()
    with Session(engine) as session:
        row = session.get(Attempt, lost)
        assert row is not None and row.status == AttemptStatus.failed


def test_only_the_leader_sweeps_on_sqlite(engine: Engine, database_url: str) -> None:
    check_one_leader_acts(engine, database_url)


def test_only_the_leader_sweeps_on_postgres() -> None:
    from app.core.migrate import upgrade

    with throwaway_database() as url:
        upgrade(url)
        engine = make_engine(url)
        try:
            check_one_leader_acts(engine, url)
        finally:
            engine.dispose()


def test_an_in_memory_database_has_one_process_and_so_a_leader() -> None:
    assert FileLock(None).held()
