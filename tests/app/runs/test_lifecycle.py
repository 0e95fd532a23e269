"""One way a run ends (app/runs/lifecycle.py): whichever of the four places ends it (a worker's
record, the web process's writer, the housekeeping, a cancel in the queue), every feature's hook
runs once, in the transaction that ends it, and a run already ended is left alone."""

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from app import features
from app.runner.events import Ended, Finished
from app.runner.progress_store import ProgressStore
from app.runs import attempts, lifecycle
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import add_unfinished_attempt
from tests.app.runs.test_writer import run_writer

RECORD = {"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 1.0]]}}


@pytest.fixture
def heard(engine: Engine) -> Iterator[list[tuple[int, str, bool, bool]]]:
    """Every call of a hook registered for the test: the run, its status as the hook saw it,
    whether a record came, and whether the ending was already visible to another connection
    (it must not be: the hook runs inside the ending's transaction)."""
    calls: list[tuple[int, str, bool, bool]] = []

    def hook(session: Session, attempt: Attempt, record: Mapping[str, Any] | None) -> None:
        assert attempt.id is not None
        with Session(engine) as outside:
            seen = outside.get(Attempt, attempt.id)
            committed = seen is not None and seen.final
        calls.append((attempt.id, str(attempt.status), record is not None, committed))

    lifecycle.when_a_run_ends("test: listen", hook)
    yield calls
    lifecycle._hooks.pop("test: listen")


def test_every_process_that_ends_runs_has_the_features_hooks(database_url: str) -> None:
    names = lifecycle.hook_names()
    features.install()  # a second install (another app in the process) adds nothing
    assert lifecycle.hook_names() == names
    assert [name.split(":")[0] for name in names if not name.startswith("test")] == [
        "exercises",
        "cases",
        "practice",
        "practice",
    ]


def test_a_workers_record_ends_the_run_once_with_the_hooks(
    engine: Engine, database_url: str, heard: list[tuple[int, str, bool, bool]]
) -> None:
    attempt_id = add_unfinished_attempt(engine)
    store = ProgressStore(database_url, attempt_id)
    assert store.claim("tls://worker-1")
    assert store.finish(RECORD) is True
    assert store.finish(RECORD) is False  # ended already: no second ending, no second hook
    assert heard == [(attempt_id, "succeeded", True, False)]


def test_the_writer_and_a_cancel_end_runs_with_the_hooks(
    engine: Engine, heard: list[tuple[int, str, bool, bool]]
) -> None:
    finished = add_unfinished_attempt(engine, status=AttemptStatus.running)
    lost = add_unfinished_attempt(engine, status=AttemptStatus.running)
    run_writer(
        engine,
        Finished(finished, RECORD),
        Ended(lost, AttemptStatus.failed, "worker lost"),
        Ended(lost, AttemptStatus.failed, "worker lost"),  # heard twice, ended once
    )
    queued = add_unfinished_attempt(engine)
    with Session(engine) as session:
        attempts.cancel_attempt(session, attempt_id=queued)
    assert heard == [
        (finished, "succeeded", True, False),
        (lost, "failed", False, False),
        (queued, "cancelled", False, False),
    ]


def test_a_run_asked_to_stop_while_running_is_not_ended_by_the_ask(
    engine: Engine, heard: list[tuple[int, str, bool, bool]]
) -> None:
    """A running run's cancel is a request its worker reads; the run ends when the worker
    stops, with its points, so the ask itself calls no hook."""
    running = add_unfinished_attempt(engine, status=AttemptStatus.running)
    with Session(engine) as session:
        attempt = attempts.cancel_attempt(session, attempt_id=running)
    assert attempt.status == AttemptStatus.running and attempt.cancel_requested_at is not None
    assert heard == []
