"""Scale-out with real processes on loopback, all started here: PostgreSQL (a throw-away
database), an external scheduler with mutual TLS and two workers, two web processes.

A run submitted through one web process streams to a browser on the other; a worker killed -9
under a run ends that run `failed` and the next run succeeds; a web process killed -9 under a run
does not stop it (the other process shows it finish); after everything is killed and started
again, no attempt is left queued or running. Metric points are counted in the database: each
(attempt, metric, step) stored once, and every stream delivered each exactly once.
"""

import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from distributed import Client, Security
from sqlalchemy import text

from app.core.db import make_engine
from app.runner.certificates import make_cluster_certificates, tls_files
from support.deployments import migrate, scheduler_arguments, web_environment, worker_arguments
from support.learner import Session, follow
from support.processes import wait_until_answers
from tests.conftest import PASSWORD, PREDICTION
from tests.postgres import throwaway_database
from tests.processes import free_port, kill_group, start, stop

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

RUN = {"drill": "overfit-one-batch", **PREDICTION}
LONG_KNOBS = {"steps": 2000}  # a few seconds: long enough to kill something under it


@dataclass
class Deployment:
    folder: Path
    database_url: str
    certs: Path
    scheduler_port: int
    web_ports: list[int]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def scheduler(self) -> str:
        return f"tls://127.0.0.1:{self.scheduler_port}"

    def web_env(self) -> dict[str, str]:
        return web_environment(
            database_url=self.database_url,
            scheduler=self.scheduler,
            certs=self.certs,
            data_dir=self.folder / "data",
        ) | {
            "DRILLBOOK_ENVIRONMENT": "test",
            "DRILLBOOK_HEARTBEAT_TIMEOUT_S": "10",
            # A run whose task was lost would wait this long in the queue: fail fast instead.
            "DRILLBOOK_QUEUE_TIMEOUT_S": "60",
        }

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def launch(self, name: str, arguments: list[str], env: dict[str, str] | None = None) -> None:
        self.processes[name] = start(arguments, self.log(name), self.folder, env)

    def start_cluster(self) -> None:
        self.launch("scheduler", scheduler_arguments(self.scheduler_port, self.certs))
        for name in ("worker-1", "worker-2"):
            self.launch(name, worker_arguments(self.scheduler, self.certs))

    def start_web(self, index: int) -> str:
        port = self.web_ports[index]
        self.launch(f"web-{index}", ["serve", "--port", str(port)], self.web_env())
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_answers(url, self.processes[f"web-{index}"], timeout=90)
        except RuntimeError as error:
            raise AssertionError(f"{error}:\n{self.tails()}") from None
        return url

    def tails(self) -> str:
        return "\n".join(
            f"--- {name}\n{self.log(name).read_text(errors='replace')[-2500:]}"
            for name in self.processes
        )

    def worker_process_at(self, address: str) -> psutil.Process:
        """The worker process (a nanny's child) serving at `address`."""
        port = address.rsplit(":", 1)[1]
        for name in ("worker-1", "worker-2"):
            if re.search(
                rf"Start worker at:\s+tls://127\.0\.0\.1:{port}\b", self.log(name).read_text()
            ):
                nanny = psutil.Process(self.processes[name].pid)
                children = nanny.children(recursive=True)
                for child in children:
                    if any(c.laddr.port == int(port) for c in child.net_connections(kind="tcp")):
                        return child
        raise AssertionError(f"no worker process serves {address}:\n{self.tails()}")

    def stop_all(self) -> None:
        for process in reversed(list(self.processes.values())):
            stop(process)


def wait_for(condition: Callable[[], bool], timeout: float, message: str = "timed out") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, message
        time.sleep(0.1)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("scale-out")
    with throwaway_database() as database_url:
        certs = folder / "certs"
        make_cluster_certificates(certs)
        (folder / "data").mkdir()
        deployment = Deployment(
            folder, database_url, certs, free_port(), [free_port(), free_port()]
        )
        migrate(deployment.web_env(), folder)
        try:
            yield deployment
        finally:
            deployment.stop_all()


def counted_points(database_url: str) -> dict[str, int]:
    """Stored points in all, and how many (attempt, metric, step) were stored more than once."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            total = connection.execute(text("SELECT count(*) FROM metric_point")).scalar_one()
            repeated = connection.execute(
                text(
                    "SELECT count(*) FROM (SELECT 1 FROM metric_point"
                    " GROUP BY attempt_id, name, step HAVING count(*) > 1) AS twice"
                )
            ).scalar_one()
            unfinished = connection.execute(
                text("SELECT count(*) FROM attempt WHERE status IN ('queued', 'running')")
            ).scalar_one()
    finally:
        engine.dispose()
    return {"total": total, "repeated": repeated, "unfinished": unfinished}


def check_stream_matches_store(log: Any, attempt: dict[str, Any]) -> None:
    delivered = log.points
    assert len(delivered) == len(set(delivered)), "a point was streamed twice"
    stored = {
        (name, int(step)) for name, points in attempt["metrics"].items() for step, _ in points
    }
    assert set(delivered) == stored, "a point was lost on the way"


def holds_tasks(deployment: Deployment, attempt_ids: list[int]) -> bool:
    """Whether the scheduler has a task for each of these attempts (asked as the web servers
    ask it, with the client certificate)."""
    files = tls_files(deployment.certs, "client")
    security = Security(
        tls_ca_file=str(files.ca),
        tls_client_cert=str(files.cert),
        tls_client_key=str(files.key),
        require_encryption=True,
    )
    with Client(deployment.scheduler, security=security, timeout=30) as client:
        keys: list[str] = client.run_on_scheduler(
            lambda dask_scheduler: [str(key) for key in dask_scheduler.tasks]
        )
    return all(any(key.startswith(f"attempt-{i}-") for key in keys) for i in attempt_ids)


def wait_until_running(browser: Session, attempt_id: int) -> dict[str, Any]:
    state: dict[str, Any] = {}

    def running() -> bool:
        state.update(browser.get_json(f"/api/attempts/{attempt_id}"))
        return bool(state["status"] == "running" and state["worker"])

    wait_for(running, 60, "the run never started")
    return state


def test_several_web_processes_share_one_external_cluster(deployment: Deployment) -> None:
    deployment.start_cluster()
    one, other = deployment.start_web(0), deployment.start_web(1)
    Session.registered(one, "learner-a", PASSWORD)
    via_one = Session.logged_in(one, "learner-a", PASSWORD)
    via_other = Session.logged_in(other, "learner-a", PASSWORD)

    # Submitted through one process, streamed live through the other.
    attempt_id = via_one.post_json("/api/attempts", RUN | {"knobs": {"steps": 600}})["id"]
    log = follow(via_other, f"/api/attempts/{attempt_id}/events", timeout=120)
    assert log.events[-1] == ("done", "succeeded"), deployment.tails()
    attempt = via_other.get_json(f"/api/attempts/{attempt_id}")
    check_stream_matches_store(log, attempt)
    assert len(attempt["metrics"]["loss"]) == 600

    # A worker killed -9 under a run: that run fails as "worker lost", the next one succeeds.
    attempt_id = via_one.post_json("/api/attempts", RUN | {"knobs": LONG_KNOBS})["id"]
    running = wait_until_running(via_other, attempt_id)
    deployment.worker_process_at(running["worker"]).send_signal(signal.SIGKILL)
    log = follow(via_other, f"/api/attempts/{attempt_id}/events", timeout=120)
    assert log.events[-1] == ("done", "failed"), deployment.tails()
    lost = via_other.get_json(f"/api/attempts/{attempt_id}")
    assert "worker process running this attempt died" in lost["error"]
    attempt_id = via_one.post_json("/api/attempts", RUN | {"knobs": {"steps": 100}})["id"]
    log = follow(via_other, f"/api/attempts/{attempt_id}/events", timeout=120)
    assert log.events[-1] == ("done", "succeeded"), deployment.tails()

    # The web process that sent three runs is killed -9 while two run and one waits for a
    # worker: all three finish anyway, and the other process streams them. The learner's third
    # run waits in the backlog (app/runs/fair_share.py: a second and later unfinished run is held in
    # the database until a worker is free), which whichever process leads sends, so it does not
    # go down with the process that stored it.
    sent = [via_one.post_json("/api/attempts", RUN | {"knobs": LONG_KNOBS}) for _ in range(3)]
    wait_until_running(via_other, sent[0]["id"])
    assert via_other.get_json(f"/api/attempts/{sent[2]['id']}")["status"] == "queued"

    # Killed only once the two sent have reached the cluster (held by the scheduler, or begun):
    # a task still in the dying process's send buffer never reaches it (on a loaded machine
    # that lost a run twice; the housekeeping then ends it after the queue timeout, as it
    # should). The second may be sent late, when the worker killed above is back.
    def reached_the_cluster(attempt_id: int) -> bool:
        status = via_other.get_json(f"/api/attempts/{attempt_id}")["status"]
        return status != "queued" or holds_tasks(deployment, [attempt_id])

    wait_for(lambda: all(reached_the_cluster(item["id"]) for item in sent[:2]), 90)
    kill_group(deployment.processes["web-0"])
    for attempt_id in [item["id"] for item in sent]:
        log = follow(via_other, f"/api/attempts/{attempt_id}/events", timeout=120)
        attempt = via_other.get_json(f"/api/attempts/{attempt_id}")
        assert log.events[-1] == ("done", "succeeded"), (
            f"{attempt['status']}: {attempt['error']}\n{deployment.tails()}"
        )
        check_stream_matches_store(log, attempt)
        assert len(attempt["metrics"]["loss"]) == LONG_KNOBS["steps"]

    # Everything killed -9 with runs under way and one waiting, then started again: nothing
    # is left queued or running.
    sent = [via_other.post_json("/api/attempts", RUN | {"knobs": LONG_KNOBS}) for _ in range(3)]
    first = sent[0]["id"]
    wait_until_running(via_other, first)
    wait_for(lambda: len(via_other.get_json(f"/api/attempts/{first}")["metrics"]) > 0, 30)
    # The web processes first: none of them is left to hear of the lost runs.
    for process in reversed(list(deployment.processes.values())):
        kill_group(process)
    # Two were running (two workers), one held for a free worker: the two are lost with the
    # cluster and ended as such after the restart; the held one was sent nowhere, and the new
    # cluster runs it.
    assert counted_points(deployment.database_url)["unfinished"] == 3
    deployment.start_cluster()
    deployment.start_web(0)
    after_restart = Session.logged_in(deployment.start_web(1), "learner-a", PASSWORD)
    wait_for(lambda: counted_points(deployment.database_url)["unfinished"] == 0, 60)
    held = after_restart.get_json(f"/api/attempts/{sent[2]['id']}")
    assert held["status"] == "succeeded", held["error"]
    attempt_id = after_restart.post_json("/api/attempts", RUN | {"knobs": {"steps": 100}})["id"]
    log = follow(after_restart, f"/api/attempts/{attempt_id}/events", timeout=120)
    assert log.events[-1] == ("done", "succeeded"), deployment.tails()
    counts = counted_points(deployment.database_url)
    assert counts["repeated"] == 0, counts
