"""The embedded worker pool under a class: it returns to its size after workers die, hands runs
only to warm workers, and answers nobody but this server (TLS, no HTTP pages)."""

import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import dask
import pytest
from distributed import Client
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from tests.conftest import PREDICTION, log_in, make_user, wait_until_final

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, TestClient]]:
    """An app with its own embedded cluster of two workers, as `make run` starts it."""
    from app.core.migrate import upgrade

    folder = tmp_path_factory.mktemp("embedded")
    url = f"sqlite:///{folder / 'drillbook.sqlite3'}"
    upgrade(url)
    settings = Settings(
        environment="test",
        database_url=url,
        secret_key="test-only-key",
        data_dir=folder,
        workers=2,
        # A nanny left without a worker is replaced after this (60 s by default): long enough
        # for a warm-up on a machine busy with the other test process.
        worker_start_grace_s=20,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        make_user(app.state.engine, "learner-a")
        log_in(client, "learner-a")
        yield app, client


def workers(app: FastAPI) -> list[str]:
    return sorted(app.state.runner.client.nthreads())


def wait_for_workers(
    app: FastAPI, count: int, timeout: float = 90, without: str | None = None
) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(found := workers(app)) == count and without not in found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"the pool has {workers(app)}, not {count} workers, after {timeout} s")


def kill(app: FastAPI, address: str) -> None:
    pid = app.state.runner.client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)


def test_the_pool_returns_to_its_size_after_two_kills_in_a_row(
    embedded: tuple[FastAPI, TestClient],
) -> None:
    app, client = embedded
    cluster = app.state.runner._cluster
    first, second = wait_for_workers(app, 2)
    # LocalCluster closes a nanny whose worker stays away this long, and never replaces it;
    # a replacement takes longer than this to warm up, so each kill costs the pool a nanny.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "0.2s"}):
        kill(app, first)
        kill(app, second)
        deadline = time.monotonic() + 30
        while len(cluster.workers) == 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(cluster.workers) < 2, "the cluster never closed a nanny: test proves nothing"
    # A nanny left without a worker is replaced after its start grace (20 s here): allow for it.
    deadline = time.monotonic() + 180
    while not (len(cluster.workers) == 2 and len(workers(app)) == 2):
        assert time.monotonic() < deadline, f"pool stuck at {workers(app)} / {cluster.workers}"
        time.sleep(0.2)

    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", **PREDICTION, "knobs": {"steps": 20}}
    )
    attempt = wait_until_final(client, response.json()["id"])
    assert attempt["status"] == "succeeded", attempt["error"]


def test_a_worker_registers_only_once_it_is_warm(embedded: tuple[FastAPI, TestClient]) -> None:
    app, _ = embedded
    client: Client = app.state.runner.client
    addresses = wait_for_workers(app, 2)
    kill(app, addresses[0])  # the replacement must warm up before it shows itself
    current = wait_for_workers(app, 2, without=addresses[0])
    warmed_at = client.run(_warmed_at, workers=current)
    registered_at = {
        message["worker"]: stamp
        for stamp, message in client.get_events("all")
        if message.get("action") == "add-worker"
    }
    for address in current:
        assert warmed_at[address] is not None, f"{address} never warmed up"
        assert warmed_at[address] <= registered_at[address], f"{address} registered cold"


def _warmed_at() -> Any:
    from drills.kit import warmup

    return warmup.warmed_at


def test_the_cluster_speaks_tls_only_and_serves_no_http_pages(
    embedded: tuple[FastAPI, TestClient],
) -> None:
    app, _ = embedded
    runner_client: Client = app.state.runner.client
    cluster = app.state.runner._cluster
    address = cluster.scheduler_address
    assert address.startswith("tls://127.0.0.1:")
    with pytest.raises(TypeError, match="TLS"):
        Client(address, timeout=5)  # any other local process, without the credentials
    # Its only other listener is in-process (no socket): the web process's own client uses it.
    listeners = [listener.contact_address for listener in cluster.scheduler.listeners]
    own = runner_client.scheduler
    assert own is not None and own.address is not None  # a connected client's
    assert [other for other in listeners if other != address] == [own.address]
    assert own.address.startswith("inproc://")

    scheduler_http = app.state.runner._cluster.scheduler.http_server.port
    worker_http = runner_client.run(lambda dask_worker: dask_worker.http_server.port)
    ports = [scheduler_http, *worker_http.values()]
    for port in ports:
        for path in ("/info/main/workers.html", "/json/counts.json", "/metrics", "/eventstream"):
            with pytest.raises(urllib.error.HTTPError) as answer:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5)
            answer.value.close()
            assert answer.value.code == 404, (port, path)


def test_a_run_sent_as_the_pool_loses_its_workers_waits_for_the_new_ones(
    embedded: tuple[FastAPI, TestClient],
) -> None:
    """Posted the moment both workers are killed, a run the scheduler hands to a dead worker
    is sent again (no worker ever started it), not failed as "worker died"."""
    app, client = embedded
    for address in wait_for_workers(app, 2):
        kill(app, address)
    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", **PREDICTION, "knobs": {"steps": 20}}
    )
    assert response.status_code == 202, response.text
    attempt = wait_until_final(client, response.json()["id"], timeout=180)
    assert attempt["status"] == "succeeded", attempt["error"]
