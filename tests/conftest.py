"""Shared fixtures: a migrated SQLite file per test, one real Dask cluster per session."""

import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import LocalCluster, Security
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.accounts import create_user
from app.config import Settings
from app.db import make_engine
from app.main import create_app
from app.migrate import upgrade
from app.models import Role, User
from app.runner.cluster import local_cluster
from tests.postgres import throwaway_database

PASSWORD = "correct horse battery staple"


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """A migrated database per test: a SQLite file, or with DRILLBOOK_TEST_DATABASE=postgresql a
    throw-away PostgreSQL database (dropped afterwards)."""
    if os.environ.get("DRILLBOOK_TEST_DATABASE") == "postgresql":
        with throwaway_database() as url:
            upgrade(url)
            yield url
        return
    url = f"sqlite:///{tmp_path / 'drillbook.sqlite3'}"
    upgrade(url)
    yield url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on the test's database, disposed afterwards: on PostgreSQL a pool left to the
    garbage collector warns (an unclosed connection) inside a later test."""
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def cluster_credentials(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Throw-away TLS credentials, written to files the way an operator's certificates are, so
    the test apps reach the shared cluster as they would an external tls:// scheduler."""
    security = Security.temporary()
    folder = tmp_path_factory.mktemp("tls")
    files = {
        "tls_ca_file": security.tls_ca_file,
        "tls_cert_file": security.tls_client_cert,
        "tls_key_file": security.tls_client_key,
    }
    paths = {}
    for name, pem in files.items():
        path = folder / f"{name}.pem"
        path.write_text(pem)
        paths[name] = path
    return paths


@pytest.fixture(scope="session")
def cluster(cluster_credentials: dict[str, Path]) -> Iterator[LocalCluster]:
    """Two real worker processes, shared by every test that runs drills (starting one is ~5 s)."""
    security = cluster_security(cluster_credentials)
    with local_cluster(workers=2, memory_limit="4GiB", security=security) as running:
        yield running


def cluster_security(credentials: dict[str, Path]) -> Security:
    """The scheduler's and workers' side of the test credentials (one self-signed pair)."""
    cert, key = str(credentials["tls_cert_file"]), str(credentials["tls_key_file"])
    return Security(
        tls_ca_file=str(credentials["tls_ca_file"]),
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        require_encryption=True,
    )


@pytest.fixture
def make_settings(
    database_url: str,
    cluster: LocalCluster,
    cluster_credentials: dict[str, Path],
    tmp_path: Path,
) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "environment": "test",
            "database_url": database_url,
            # The export signing key of each test's app, kept out of the repository's var/.
            "data_dir": tmp_path / "data",
            "scheduler_address": cluster.scheduler_address,
            **cluster_credentials,
            "secret_key": "test-only-session-key",
        }
        return Settings(**(values | overrides))

    return build


def make_user(engine: Engine, username: str, role: Role = Role.learner) -> User:
    with Session(engine) as session:
        return create_user(
            session, username=username, display_name=username.title(), password=PASSWORD, role=role
        )


def log_in(client: TestClient, username: str, password: str = PASSWORD) -> None:
    """Log in through the real form (CSRF token included), then send the new session's token
    as X-CSRF-Token on every later request, as htmx does."""
    client.headers.pop("X-CSRF-Token", None)
    page = client.get("/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    response = client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    client.headers["X-CSRF-Token"] = client.get("/api/session").json()["csrf_token"]


@pytest.fixture
def anonymous(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture
def client(anonymous: TestClient) -> TestClient:
    """Logged in as the learner "learner-a"."""
    make_user(anonymous.app.state.engine, "learner-a")  # type: ignore[attr-defined]
    log_in(anonymous, "learner-a")
    return anonymous


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
