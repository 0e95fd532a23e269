"""Shared fixtures: a migrated database per test (a copy of one migrated per test process), one
real Dask cluster per test process, cheap password hashes, and a check that no test leaves a run
behind on that cluster."""

import asyncio
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from distributed import LocalCluster, Security
from fastapi.testclient import TestClient
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlalchemy import Engine
from sqlmodel import Session

from app import features
from app.accounts.models import Role, User
from app.accounts.service import create_user
from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import upgrade
from app.main import create_app
from app.runner.cluster import local_cluster
from app.runs.models import Attempt
from app.runs.replay_models import Replay
from app.security import passwords
from tests import groups
from tests.postgres import database_name, throwaway_database

# Tests that end runs without an app (a writer or housekeeping of their own) get the features'
# hooks too, as every process that ends runs does.
features.install()

# The embedded clusters that tests start through their settings (the pool, load and shutdown
# tests, the servers they run as subprocesses) start no sandbox spawner with their workers:
# 4-5 s of CPU each, at every worker start and restart. The shared cluster below does, since the
# exercise tests run on it (tests/app/runner/test_sandbox_prewarm.py).
os.environ.setdefault("DRILLBOOK_SANDBOX_PREWARM", "0")

PASSWORD = "correct horse battery staple"
# The recommended argon2id parameters cost ~0.25 s and 64 MiB a hash; the tests hash hundreds
# of passwords. Tests hash with the cheapest parameters instead: logging in verifies through the
# same code (argon2 reads the parameters from the hash). `real_password_hashing` restores them.
CHEAP_HASHER = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1),))
REAL_HASHER, REAL_DUMMY_HASH = passwords._hasher, passwords._DUMMY_HASH
CHEAP_DUMMY_HASH = CHEAP_HASHER.hash("drillbook-no-such-user")


# The baseid of this conftest's fixtures: its folder's name, "tests" (the rootdir, pyproject.toml's,
# is the folder above it).
ROOT_BASEID = Path(__file__).parent.name
GROUPS_FOLDER = pytest.StashKey[Path]()


def on_postgres() -> bool:
    return os.environ.get("DRILLBOOK_TEST_DATABASE") == "postgresql"


def pytest_configure(config: pytest.Config) -> None:
    """The controlling process of a grouped run makes the folder its test processes write their
    groups into (tests/groups.py)."""
    if grouped_run(config):
        config.stash[GROUPS_FOLDER] = Path(tempfile.mkdtemp(prefix="drillbook-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(GROUPS_FOLDER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_configure_node(node: Any) -> None:
    folder = node.config.stash.get(GROUPS_FOLDER, None)
    if folder is not None:
        node.workerinput[groups.FOLDER_KEY] = str(folder)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    folder = config.stash.get(GROUPS_FOLDER, None)
    return None if folder is None else groups.SharedFixtureScheduling(config, folder, log)


def grouped_run(config: pytest.Config) -> bool:
    return (
        not hasattr(config, "workerinput")
        and config.getvalue("dist") == "loadgroup"
        and bool(config.getvalue("numprocesses"))
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if on_postgres():
        keep_the_database_tests(config, items)
    groups.write_groups(config, items, ROOT_BASEID)


def keep_the_database_tests(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The PostgreSQL pass runs only the tests that have the test database (they ask for
    `database_url`, directly or through the app fixtures): the others would run exactly as in
    the SQLite pass (those that make PostgreSQL databases of their own run there)."""
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        (kept if "database_url" in getattr(item, "fixturenames", ()) else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing() -> Iterator[None]:
    passwords._hasher, passwords._DUMMY_HASH = CHEAP_HASHER, CHEAP_DUMMY_HASH
    yield
    passwords._hasher, passwords._DUMMY_HASH = REAL_HASHER, REAL_DUMMY_HASH


@pytest.fixture
def real_password_hashing() -> Iterator[None]:
    """The app's own argon2id parameters, for the tests about them."""
    passwords._hasher, passwords._DUMMY_HASH = REAL_HASHER, REAL_DUMMY_HASH
    yield
    passwords._hasher, passwords._DUMMY_HASH = CHEAP_HASHER, CHEAP_DUMMY_HASH


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The schema, migrated once per test process: every test's database starts as a copy of
    it (a file copy; on PostgreSQL CREATE DATABASE ... TEMPLATE) instead of running every
    migration again (0.18 s a test on SQLite, 0.25 s on PostgreSQL). Yields a SQLite file's
    path or a PostgreSQL database's name. The migrations themselves are tested on fresh
    databases in test_migrations."""
    if on_postgres():
        with throwaway_database() as url:
            upgrade(url)
            yield database_name(url)
        return
    path = tmp_path_factory.mktemp("template") / "drillbook.sqlite3"
    upgrade(f"sqlite:///{path}")
    # Every connection is closed, so SQLite has folded its write-ahead log into the file.
    assert not path.with_name(path.name + "-wal").exists()
    yield str(path)


@pytest.fixture
def database_url(migrated_template: str, tmp_path: Path) -> Iterator[str]:
    """A migrated database per test: a SQLite file, or with DRILLBOOK_TEST_DATABASE=postgresql a
    throw-away PostgreSQL database (dropped afterwards)."""
    if on_postgres():
        with throwaway_database(template=migrated_template) as url:
            yield url
        return
    path = tmp_path / "drillbook.sqlite3"
    shutil.copyfile(migrated_template, path)
    yield f"sqlite:///{path}"


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on the test's database, disposed afterwards: on PostgreSQL a pool left to the
    garbage collector warns (an unclosed connection) inside a later test."""
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


class ClusterCredentials(TypedDict):
    """The client's side of the test cluster's TLS, by the names of the Settings fields."""

    tls_ca_file: Path
    tls_cert_file: Path
    tls_key_file: Path


@pytest.fixture(scope="session")
def cluster_credentials(tmp_path_factory: pytest.TempPathFactory) -> ClusterCredentials:
    """Throw-away TLS credentials, written to files the way an operator's certificates are, so
    the test apps reach the shared cluster as they would an external tls:// scheduler."""
    security = Security.temporary()
    folder = tmp_path_factory.mktemp("tls")

    def written(name: str, pem: str) -> Path:
        path = folder / f"{name}.pem"
        path.write_text(pem)
        return path

    return ClusterCredentials(
        tls_ca_file=written("tls_ca_file", security.tls_ca_file),
        tls_cert_file=written("tls_cert_file", security.tls_client_cert),
        tls_key_file=written("tls_key_file", security.tls_client_key),
    )


@pytest.fixture(scope="session")
def cluster(cluster_credentials: ClusterCredentials) -> Iterator[LocalCluster]:
    """Two real worker processes, shared by every test that runs drills (starting one is ~5 s)."""
    security = cluster_security(cluster_credentials)
    with local_cluster(
        workers=2, memory_limit="4GiB", security=security, sandbox_prewarm=True
    ) as running:
        yield running


# How long the cluster may take, after a test, to finish the runs its database calls ended (the
# worker's last report, a cancel noticed at the next step).
DRAIN_S = 10.0


@pytest.fixture
def no_run_left_behind(database_url: str, cluster: LocalCluster) -> Iterator[None]:
    """Fails the test that left a run on the shared cluster: a task still there, once the
    test's apps have closed, for an attempt or replay its database says is not over. Such a
    run takes a worker from the tests that follow, and on PostgreSQL it retries for ~29 s
    against the test's dropped database. Every app fixture depends on this one, so it is
    checked after they are torn down and before the database is; the cluster is freed of the
    runs either way."""
    yield
    tasks = unfinished_tasks(cluster)
    if not tasks:
        return
    left = sorted(key for key in tasks if not _ended_in(database_url, key))
    deadline = time.monotonic() + DRAIN_S
    while tasks and time.monotonic() < deadline:
        time.sleep(0.05)
        tasks = unfinished_tasks(cluster)
    if tasks:  # only a new worker process stops a task that is running (a cancel does not)
        scheduler = cluster.scheduler
        assert scheduler is not None  # a running cluster's
        cluster.sync(
            scheduler.restart_workers,
            list(scheduler.workers),
            on_error="return",
            stimulus_id=f"runs-left-behind-{time.time()}",
        )
    if left or tasks:
        pytest.fail(f"the test left runs on the cluster: {left or sorted(tasks)}", pytrace=False)


def unfinished_tasks(cluster: LocalCluster) -> dict[str, str]:
    """The scheduler's tasks that have not ended, by key (state): read on the scheduler's own
    event loop, where its task table changes."""

    scheduler = cluster.scheduler
    assert scheduler is not None  # a running cluster's

    async def states() -> dict[str, str]:
        await asyncio.sleep(0)
        return {
            str(key): task.state
            for key, task in scheduler.tasks.items()
            if task.state not in ("memory", "erred", "released", "forgotten")
        }

    result: dict[str, str] = cluster.sync(states)
    return result


def _ended_in(database_url: str, task_key: str) -> bool:
    """Whether the database says the attempt or replay behind a task key ("attempt-7-1a2b3c4d",
    "replay-3-...") is over (a task of another kind is never over)."""
    kind, _, rest = task_key.partition("-")
    row_id = rest.partition("-")[0]
    if kind not in ("attempt", "replay") or not row_id.isdecimal():
        return False
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:
            row: Attempt | Replay | None = (
                session.get(Attempt, int(row_id))
                if kind == "attempt"
                else session.get(Replay, int(row_id))
            )
            return row is not None and row.status not in ("queued", "running")
    finally:
        engine.dispose()


def cluster_security(credentials: ClusterCredentials) -> Security:
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
    cluster_credentials: ClusterCredentials,
    tmp_path: Path,
    no_run_left_behind: None,
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


# How long a test waits for runs it started to end. A run ends in seconds on a quiet machine and
# the waits return as soon as it does; the first run of a fresh worker imports torch (about 7 s
# of CPU), and with other processes on both cores one took over a minute (a case test once
# failed at the 60 s this used to be). Long enough for that, well under pytest-timeout's 300 s.
RUN_WAIT_S = 180.0


def wait_until_final(
    client: TestClient,
    attempt_id: int,
    timeout: float = RUN_WAIT_S,
    *,
    path: str = "/api/attempts/{}",
) -> dict[str, Any]:
    """The run's record once it has ended (`path`: where it is read; an exercise run's is
    /api/exercises/runs/{})."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(path.format(attempt_id)).json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"run {attempt_id} still not final after {timeout} s")


def wait_for_exercise_run(
    client: TestClient, run_id: int, timeout: float = RUN_WAIT_S
) -> dict[str, Any]:
    return wait_until_final(client, run_id, timeout, path="/api/exercises/runs/{}")


def wait_for_status(client: TestClient, attempt_id: int, wanted: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get(f"/api/attempts/{attempt_id}").json()["status"] == wanted:
            return
        time.sleep(0.05)
    raise AssertionError(f"attempt {attempt_id} never reached {wanted!r}")
