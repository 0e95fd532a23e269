"""What a worker stores while it runs: the claim happens once, points land once, the final record
only on an unfinished attempt, and the learner's cancel reaches the run through the heartbeat."""

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.runner.events import Point
from app.runner.progress_store import ProgressStore
from app.runs import evidence
from app.runs.attempts import cancel_attempt
from app.runs.models import Attempt, AttemptStatus, MetricPoint
from tests.app.factories import add_unfinished_attempt

RECORD = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 1.0], [2, 0.5]]}}


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


def test_a_batch_is_stored_in_its_order_and_returns_its_highest_id(engine: Engine) -> None:
    # On PostgreSQL a batch goes in as three arrays (evidence.insert_points): the ids must still
    # follow the batch's order (the streams send points by id), and non-finite values be NULL.
    attempt_id = add_unfinished_attempt(engine)
    batch: list[Point] = [("loss", step, 1.0 / (step + 1)) for step in range(300)]
    batch += [("grad_norm", 0, float("nan")), ("grad_norm", 1, "inf"), ("grad_norm", 2, None)]
    batch += [("accuracy", 0, 1)]  # an int among floats, as a record read back from JSON has
    with Session(engine) as session:
        highest = evidence.insert_points(session, attempt_id=attempt_id, points=batch)
        again = evidence.insert_points(
            session, attempt_id=attempt_id, points=[("loss", 300, 0.001)]
        )
        session.commit()
    with Session(engine) as session:
        rows = session.exec(
            select(MetricPoint.id, MetricPoint.name, MetricPoint.step, MetricPoint.value)
            .where(MetricPoint.attempt_id == attempt_id)
            .order_by(MetricPoint.id)  # type: ignore[arg-type]
        ).all()
    assert [(name, step) for _, name, step, _ in rows] == [
        (name, step) for name, step, _ in batch
    ] + [("loss", 300)]
    assert [value for _, name, _, value in rows if name == "grad_norm"] == [None, None, None]
    assert rows[0][3] == 1.0 and rows[299][3] == pytest.approx(1 / 300)
    assert [value for _, name, _, value in rows if name == "accuracy"] == [1.0]
    assert highest == rows[-2][0] and again == rows[-1][0] and again > highest
    assert evidence.insert_points(session, attempt_id=attempt_id, points=[]) == 0
