"""What a worker stores while it runs: the claim happens once, points land once, the final record
only on an unfinished attempt, and the learner's cancel reaches the run through the heartbeat."""

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from app import evidence
from app.attempts import cancel_attempt
from app.db import make_engine
from app.models import Attempt, AttemptStatus, MetricPoint
from app.runner.progress_store import ProgressStore
from tests.app.factories import add_unfinished_attempt

RECORD = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 1.0], [2, 0.5]]}}


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


def read(engine: Engine, attempt_id: int) -> Attempt:
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        return attempt


def test_an_attempt_is_claimed_once(engine: Engine, database_url: str) -> None:
    attempt_id = add_unfinished_attempt(engine)
    first, second = ProgressStore(database_url, attempt_id), ProgressStore(database_url, attempt_id)
    assert first.claim("tls://worker-1") is True
    assert second.claim("tls://worker-2") is False  # a duplicate delivery runs nothing
    attempt = read(engine, attempt_id)
    assert attempt.status == AttemptStatus.running and attempt.worker == "tls://worker-1"
    assert attempt.started_at is not None and attempt.heartbeat_at is not None


def test_a_worker_finds_a_cancelled_queued_attempt_and_runs_nothing(
    engine: Engine, database_url: str
) -> None:
    attempt_id = add_unfinished_attempt(engine)
    with Session(engine) as session:
        cancel_attempt(session, attempt_id=attempt_id)
    assert read(engine, attempt_id).status == AttemptStatus.cancelled
    assert ProgressStore(database_url, attempt_id).claim("tls://worker-1") is False
    assert read(engine, attempt_id).status == AttemptStatus.cancelled


def test_points_and_the_record_are_stored_once_each(engine: Engine, database_url: str) -> None:
    attempt_id = add_unfinished_attempt(engine)
    store = ProgressStore(database_url, attempt_id)
    store.claim("tls://worker-1")
    store.add_points([("loss", 0, 2.0), ("loss", 1, 1.0)])
    assert store.finish(RECORD) is True
    assert store.finish(RECORD | {"status": "error", "error": "again"}) is False
    attempt = read(engine, attempt_id)
    assert attempt.status == AttemptStatus.succeeded and attempt.error is None
    with Session(engine) as session:
        assert evidence.metric_series(session, attempt_id=attempt_id) == RECORD["metrics"]
        assert len(session.exec(select(MetricPoint)).all()) == 3


def test_an_attempt_ended_from_outside_keeps_its_verdict(engine: Engine, database_url: str) -> None:
    """The housekeeping gave up on the run (say its heartbeat stopped): a late worker changes
    nothing, neither points nor record."""
    attempt_id = add_unfinished_attempt(engine)
    store = ProgressStore(database_url, attempt_id)
    store.claim("tls://worker-1")
    with Session(engine) as session:
        attempt = evidence.lock_attempt(session, attempt_id)
        assert attempt is not None
        evidence.end_without_record(
            session, attempt=attempt, status=AttemptStatus.failed, error="worker lost"
        )
        session.commit()
    store.add_points([("loss", 0, 2.0)])
    assert store.finish(RECORD) is False
    attempt = read(engine, attempt_id)
    assert (attempt.status, attempt.error) == (AttemptStatus.failed, "worker lost")
    with Session(engine) as session:
        assert session.exec(select(MetricPoint)).all() == []


def test_the_heartbeat_carries_the_cancel_request_to_the_run(
    engine: Engine, database_url: str
) -> None:
    attempt_id = add_unfinished_attempt(engine)
    store = ProgressStore(database_url, attempt_id)
    store.claim("tls://worker-1")
    before = read(engine, attempt_id).heartbeat_at
    store.beat()
    assert not store.cancel_requested.is_set()
    with Session(engine) as session:
        asked = cancel_attempt(session, attempt_id=attempt_id)
    assert asked.status == AttemptStatus.running and asked.cancel_requested_at is not None
    store.beat()
    assert store.cancel_requested.is_set()
    after = read(engine, attempt_id).heartbeat_at
    assert before is not None and after is not None and after >= before
