"""The evidence writer (a web process's verdicts and the records a worker could not store) never
drops a message: a database that says "not now" is tried again until it takes the write; a
message that can never be stored ends its attempt `failed`, saying why; an attempt that has
already ended is left as it is."""

from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from app.runner.events import Ended, Finished
from app.runs import evidence
from app.runs.broker import AttemptEventBroker
from app.runs.evidence_writer import EvidenceWriter
from app.runs.models import Attempt, AttemptStatus, MetricPoint
from tests.app.factories import add_unfinished_attempt


def run_writer(engine: Engine, *messages: Any) -> list[float]:
    """Feed the messages to a real writer thread and wait until it has handled them all."""
    pauses: list[float] = []
    writer = EvidenceWriter(engine, AttemptEventBroker(), pause=pauses.append)
    writer.start()
    for message in messages:
        writer.put(message)
    writer.stop()
    return pauses


def store_points(engine: Engine, attempt_id: int, points: list[tuple[str, int, float]]) -> None:
    """As the attempt's worker stores them while it runs."""
    with Session(engine) as session:
        evidence.insert_points(session, attempt_id=attempt_id, points=points)
        session.commit()


def test_a_locked_database_is_retried_until_the_record_is_stored(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempt_id = add_unfinished_attempt(engine, status=AttemptStatus.running)
    real_finish = evidence.finish_from_record
    refusals = iter([True, True, True])

    def finish_after_three_refusals(session: Session, **kwargs: Any) -> None:
        if next(refusals, False):
            raise OperationalError("UPDATE", {}, Exception("database is locked"))
        real_finish(session, **kwargs)

    monkeypatch.setattr(evidence, "finish_from_record", finish_after_three_refusals)
    record = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 1.0]]}}
    pauses = run_writer(engine, Finished(attempt_id, record))
    assert len(pauses) == 3 and pauses == sorted(pauses)  # growing pauses between tries
    with Session(engine) as session:
        series = evidence.metric_series(session, attempt_id=attempt_id)
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None and attempt.status == AttemptStatus.succeeded
    assert series == {"loss": [[0, 2.0], [1, 1.0]]}


def test_a_record_that_cannot_be_stored_ends_the_attempt_failed_with_the_reason(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    attempt_id = add_unfinished_attempt(engine, status=AttemptStatus.running)
    broken_record = {"status": "ok", "metrics": {"loss": [["not a step", 1.0]]}}
    run_writer(engine, Finished(attempt_id, broken_record))
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        assert attempt.status == AttemptStatus.failed
        assert attempt.error is not None and "could not store" in attempt.error
        assert attempt.finished_at is not None
    assert any(record.levelname == "ERROR" for record in caplog.records)


def test_the_final_record_adds_the_points_that_never_streamed_and_keeps_each_once(
    engine: Engine,
) -> None:
    attempt_id = add_unfinished_attempt(engine, status=AttemptStatus.running)
    record = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 1.0], [2, 0.5]], "acc": [[2, 1]]}}
    store_points(engine, attempt_id, [("loss", 0, 2.0), ("loss", 1, 1.0)])
    run_writer(engine, Finished(attempt_id, record))
    with Session(engine) as session:
        assert evidence.metric_series(session, attempt_id=attempt_id) == record["metrics"]
        assert len(session.exec(select(MetricPoint)).all()) == 4


def test_streamed_points_the_record_disagrees_with_are_replaced(engine: Engine) -> None:
    attempt_id = add_unfinished_attempt(engine, status=AttemptStatus.running)
    record = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 0.75]]}}
    store_points(engine, attempt_id, [("loss", 0, 2.0), ("loss", 1, 1.0), ("stale", 0, 9.0)])
    run_writer(engine, Finished(attempt_id, record))
    with Session(engine) as session:
        assert evidence.metric_series(session, attempt_id=attempt_id) == record["metrics"]


def test_an_attempt_that_has_ended_is_left_as_it_is(engine: Engine) -> None:
    """A lost-worker verdict arriving after the worker stored its record changes nothing."""
    attempt_id = add_unfinished_attempt(engine, status=AttemptStatus.running)
    record = {"status": "ok", "metrics": {"loss": [[0, 2.0]]}}
    run_writer(
        engine,
        Finished(attempt_id, record),
        Ended(attempt_id, AttemptStatus.failed, "worker lost"),
        Finished(attempt_id, {"status": "error", "error": "a second record", "metrics": {}}),
    )
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        assert (attempt.status, attempt.error) == (AttemptStatus.succeeded, None)
        assert evidence.metric_series(session, attempt_id=attempt_id) == record["metrics"]


def test_a_run_no_worker_started_is_sent_again_instead_of_failed(engine: Engine) -> None:
    """A worker that died under a task: sent again if its attempt is still queued (no worker
    started it), failed if it was running (a run that killed its worker is not re-run)."""
    queued = add_unfinished_attempt(engine, status=AttemptStatus.queued)
    running = add_unfinished_attempt(engine, status=AttemptStatus.running)
    unsendable = add_unfinished_attempt(engine, status=AttemptStatus.queued)
    resent: list[int] = []

    def refuse() -> None:
        raise RuntimeError("no worker has been available for over 30 s")

    run_writer(
        engine,
        Ended(queued, AttemptStatus.failed, "worker lost", resend=lambda: resent.append(queued)),
        Ended(running, AttemptStatus.failed, "worker lost", resend=lambda: resent.append(running)),
        Ended(unsendable, AttemptStatus.failed, "worker lost", resend=refuse),
    )
    assert resent == [queued]
    with Session(engine) as session:
        statuses = {i: session.get(Attempt, i).status for i in (queued, running, unsendable)}  # type: ignore[union-attr]
    assert statuses == {
        queued: AttemptStatus.queued,
        running: AttemptStatus.failed,
        unsendable: AttemptStatus.failed,
    }
