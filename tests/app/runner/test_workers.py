"""What happens to an attempt when its worker dies, overruns its limits, or the server restarts."""

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.core.config import Settings
from app.main import create_app
from app.runner.cluster import local_cluster
from app.runs import housekeeping
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import add_unfinished_attempt
from tests.conftest import (
    PREDICTION,
    ClusterCredentials,
    cluster_security,
    log_in,
    make_user,
    wait_for_status,
    wait_until_final,
)

LONG_RUN = {"steps": 2000, "examples": 8}


def start(client: TestClient, **knobs: Any) -> int:
    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", **PREDICTION, "knobs": knobs}
    )
    assert response.status_code == 202, response.text
    attempt_id: int = response.json()["id"]
    return attempt_id


@pytest.mark.slow  # kills a worker; the nanny starts and warms a new one
def test_a_worker_killed_mid_run_fails_the_attempt_and_the_pool_keeps_serving(
    client: TestClient,
) -> None:
    attempt_id = start(client, **LONG_RUN)
    wait_for_status(client, attempt_id, "running")
    address = client.get(f"/api/attempts/{attempt_id}").json()["worker"]
    runner = client.app.state.runner  # type: ignore[attr-defined]
    pid = runner.client.run(os.getpid, workers=[address])[address]

    os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    attempt = wait_until_final(client, attempt_id, timeout=20)
    assert attempt["status"] == "failed"
    assert "worker process" in attempt["error"] and "died" in attempt["error"]
    assert time.monotonic() - killed_at < 10

    retry = wait_until_final(client, start(client, steps=50), timeout=60)
    assert retry["status"] == "succeeded", retry["error"]


@contextmanager
def logged_in(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        make_user(app.state.engine, "learner-a")
        log_in(client, "learner-a")
        yield client


def test_a_run_over_its_time_limit_ends_timed_out(make_settings: Callable[..., Settings]) -> None:
    with logged_in(create_app(make_settings(time_limit_s=0.2))) as client:
        attempt = wait_until_final(client, start(client, **LONG_RUN))
    assert attempt["status"] == "timed_out"
    assert "0.2" in attempt["error"]
    # What ran before the limit is kept as evidence.
    assert 0 < len(attempt["metrics"]["loss"]) < LONG_RUN["steps"]


def test_a_run_over_its_memory_cap_ends_resource_limit(
    make_settings: Callable[..., Settings],
) -> None:
    # A warm worker already holds a few hundred MB, so a 50 MB cap trips at the first check.
    # Settings refuse such a cap (every run would end like this); model_copy skips the check.
    settings = make_settings().model_copy(update={"memory_limit_mb": 50})
    with logged_in(create_app(settings)) as client:
        attempt = wait_until_final(client, start(client, steps=200))
    assert attempt["status"] == "resource_limit"
    assert "memory" in attempt["error"].lower()


def test_a_restart_ends_attempts_left_running(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings()
    app = create_app(settings)
    for status in (AttemptStatus.queued, AttemptStatus.running):
        add_unfinished_attempt(app.state.engine, status=status)
    with TestClient(app), Session(app.state.engine) as session:
        for attempt_id in (1, 2):
            attempt = session.get(Attempt, attempt_id)
            assert attempt is not None and attempt.status == "failed"
            assert attempt.error is not None and "restarted" in attempt.error


@pytest.mark.slow  # starts a cluster of its own
def test_the_embedded_cluster_starts_with_the_app_and_runs_a_drill(database_url: str) -> None:
    settings = Settings(
        environment="test", database_url=database_url, workers=1, secret_key="test-only-key"
    )
    with logged_in(create_app(settings)) as client:
        attempt = wait_until_final(client, start(client, steps=30))
    assert attempt["status"] == "succeeded", attempt["error"]


@pytest.mark.slow  # starts a cluster of its own
def test_with_no_worker_in_the_pool_a_new_attempt_fails_at_once(
    database_url: str, cluster_credentials: ClusterCredentials
) -> None:
    # An external scheduler with no workers at all: nothing would ever pick the run up.
    security = cluster_security(cluster_credentials)
    with local_cluster(workers=0, memory_limit="1GiB", security=security) as empty:
        settings = Settings(
            environment="test",
            database_url=database_url,
            secret_key="test-only-key",
            scheduler_address=empty.scheduler_address,
            no_worker_grace_s=0.2,
            **cluster_credentials,
        )
        with logged_in(create_app(settings)) as client:
            time.sleep(1.0)  # the watchdog counts workers every 0.5 s
            posted_at = time.monotonic()
            attempt = wait_until_final(client, start(client, steps=20), timeout=20)
            waited = time.monotonic() - posted_at
    assert attempt["status"] == "failed"
    assert "no worker has been available" in attempt["error"]
    assert waited < 5  # not the queue timeout (600 s)


def test_an_attempt_the_busy_pool_never_starts_fails_after_the_queue_timeout(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sweep ten times a second: the verdict must come while both long runs still hold the
    # workers, even on a machine slowed by other work (a 1 s sweep once missed that window).
    monkeypatch.setattr(housekeeping, "SWEEP_EVERY_S", 0.1)
    settings = make_settings()
    with logged_in(create_app(settings)) as client:
        # A warm pool first, under the usual timeout: on a cold machine (a fresh clone) the
        # workers can take longer than 0.5 s to start their first runs, and the sweep then failed
        # a long run instead of the one meant to wait.
        for attempt_id in [start(client, steps=10) for _ in range(2)]:
            wait_until_final(client, attempt_id)
        settings.queue_timeout_s = 0.5  # read at every sweep
        busy = [start(client, **LONG_RUN) for _ in range(2)]
        waiting = start(client, steps=20)
        attempt = wait_until_final(client, waiting, timeout=30)
        for attempt_id in busy:
            wait_until_final(client, attempt_id)
    assert attempt["status"] == "failed"
    assert "No worker started this run within 0.5 s" in attempt["error"]
