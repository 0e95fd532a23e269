"""Shared fixtures: a migrated SQLite file per test, one real Dask cluster per session."""

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import LocalCluster
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.migrate import upgrade
from app.runner.cluster import local_cluster


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'drillbook.sqlite3'}"
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    """Two real worker processes, shared by every test that runs drills (starting one is ~5 s)."""
    with local_cluster(workers=2, memory_limit="4GiB") as running:
        yield running


@pytest.fixture
def make_settings(database_url: str, cluster: LocalCluster) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "environment": "test",
            "database_url": database_url,
            "scheduler_address": cluster.scheduler_address,
        }
        return Settings(**(values | overrides))

    return build


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


PREDICTION = {"hypothesis": "fits", "prediction": "The loss drops to about zero."}


def wait_until_final(client: TestClient, attempt_id: int, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/api/attempts/{attempt_id}").json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"attempt {attempt_id} still not final after {timeout} s")


def wait_for_status(client: TestClient, attempt_id: int, wanted: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get(f"/api/attempts/{attempt_id}").json()["status"] == wanted:
            return
        time.sleep(0.05)
    raise AssertionError(f"attempt {attempt_id} never reached {wanted!r}")
