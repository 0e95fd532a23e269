"""An external cluster started with the documented commands, as separate processes on loopback:
`python -m app scheduler`, two `python -m app worker`, and the web server's side of mutual TLS
(`external_security` with the files `certs` made)."""

import os
import socket
import ssl
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, KilledWorker, Security

from app.core.config import Settings
from app.runner.certificates import make_cluster_certificates, tls_files
from app.runner.cluster import external_security
from app.runner.warm_preload import WORKER_NICENESS
from tests.processes import free_port, start, stop

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

MEMORY_LIMIT = 2**30


@dataclass
class ExternalCluster:
    address: str
    certs: Path
    logs: dict[str, Path]
    # Seconds from starting the processes until the scheduler answered / both workers registered.
    scheduler_up_s: float = 0.0
    workers_up_s: float = 0.0

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def log_tails(self) -> str:
        return "\n".join(f"--- {name}\n{self.log(name)[-3000:]}" for name in self.logs)


@pytest.fixture(scope="module")
def external_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExternalCluster]:
    folder = tmp_path_factory.mktemp("external-cluster")
    certs = folder / "certs"
    make_cluster_certificates(certs)
    port = free_port()
    cluster = ExternalCluster(
        address=f"tls://127.0.0.1:{port}",
        certs=certs,
        logs={name: folder / f"{name}.log" for name in ("scheduler", "worker-1", "worker-2")},
    )
    started_at = time.monotonic()
    processes = [
        start(
            ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--certs", str(certs)],
            cluster.logs["scheduler"],
            folder,
        )
    ]
    try:
        for name in ("worker-1", "worker-2"):
            worker = ["worker", cluster.address, "--certs", str(certs), "--memory-limit", "1GiB"]
            processes.append(start(worker, cluster.logs[name], folder))
        with web_client(cluster) as client:
            cluster.scheduler_up_s = time.monotonic() - started_at
            try:
                client.wait_for_workers(2, timeout=45)
            except TimeoutError:
                pytest.fail(f"the workers did not register:\n{cluster.log_tails()}")
            cluster.workers_up_s = time.monotonic() - started_at
        yield cluster
    finally:
        for process in reversed(processes):
            stop(process)


@contextmanager
def web_client(cluster: ExternalCluster) -> Iterator[Client]:
    """A Client with the web server's credentials, built as the app builds it."""
    files = tls_files(cluster.certs, "client")
    settings = Settings(
        environment="test",
        scheduler_address=cluster.address,
        tls_ca_file=files.ca,
        tls_cert_file=files.cert,
        tls_key_file=files.key,
    )
    with Client(cluster.address, security=external_security(settings), timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def client(external_cluster: ExternalCluster) -> Iterator[Client]:
    with web_client(external_cluster) as connected:
        yield connected


def test_two_warm_single_threaded_workers_run_a_task(
    external_cluster: ExternalCluster, client: Client
) -> None:
    print(
        f"scheduler answered after {external_cluster.scheduler_up_s:.1f} s, "
        f"two warm workers registered after {external_cluster.workers_up_s:.1f} s"
    )
    client.wait_for_workers(2, timeout=90)  # one may be coming back from an earlier test's kill
    assert client.submit(lambda x: x + 1, 41).result(timeout=30) == 42

    workers = client.scheduler_info()["workers"]
    assert len(workers) == 2
    assert [(w["nthreads"], w["memory_limit"]) for w in workers.values()] == [(1, MEMORY_LIMIT)] * 2

    def worker_state() -> dict[str, Any]:
        from drills.kit import warmup

        return {
            "torch imported": "torch" in sys.modules,
            "warmed": warmup.warmed_at is not None,
            "niceness": os.getpriority(os.PRIO_PROCESS, 0),
        }

    for state in client.run(worker_state).values():
        assert state["torch imported"] and state["warmed"]
        assert state["niceness"] >= WORKER_NICENESS


def test_the_cluster_runs_with_drillbooks_config(client: Client) -> None:
    # Both workers (a test before this one in a shuffled order may have killed one).
    client.wait_for_workers(2, timeout=90)

    def config() -> dict[str, Any]:
        import dask

        return {
            key: dask.config.get(key)
            for key in (
                "distributed.scheduler.allowed-failures",
                "distributed.comm.require-encryption",
                "distributed.scheduler.http.routes",
                "distributed.worker.http.routes",
            )
        }

    expected = {
        "distributed.scheduler.allowed-failures": 0,
        "distributed.comm.require-encryption": True,
        "distributed.scheduler.http.routes": [],
        "distributed.worker.http.routes": [],
    }
    assert client.run_on_scheduler(config) == expected
    assert list(client.run(config).values()) == [expected] * 2


def test_a_certificate_from_another_ca_is_refused(external_cluster: ExternalCluster) -> None:
    # The intruder trusts the cluster's CA (it could read ca.pem) but has no certificate the
    # CA signed: the scheduler itself must refuse it.
    intruder = Security.temporary()
    security = Security(
        tls_ca_file=str(tls_files(external_cluster.certs, "client").ca),
        tls_client_cert=intruder.tls_client_cert,
        tls_client_key=intruder.tls_client_key,
        require_encryption=True,
    )
    with pytest.raises(OSError):
        Client(external_cluster.address, security=security, timeout=5)
    assert "certificate verify failed" in wait_for_log(external_cluster, "scheduler", "verify")


def test_a_client_without_a_certificate_is_refused(external_cluster: ExternalCluster) -> None:
    context = ssl.create_default_context(cafile=str(external_cluster.certs / "ca.pem"))
    context.check_hostname = False  # as Dask's own clients: the CA, not the name, is trusted
    port = int(external_cluster.address.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with context.wrap_socket(raw) as connection:
                connection.sendall(b"\0" * 8)
                connection.recv(8)  # TLS 1.3: the server's refusal arrives after the handshake
    assert "peer did not return a certificate" in wait_for_log(
        external_cluster, "scheduler", "did not return"
    )


def test_plain_tcp_is_refused(external_cluster: ExternalCluster) -> None:
    with pytest.raises(OSError):
        Client(external_cluster.address.replace("tls://", "tcp://"), timeout=5)


def test_a_task_that_kills_its_worker_fails_at_once_and_is_not_retried(
    client: Client, tmp_path: Path
) -> None:
    # Runs last in this module: a worker dies (its nanny then starts and warms another).
    runs = tmp_path / "runs"

    def die(path: str) -> None:
        with open(path, "a") as log:
            log.write("started\n")
        os._exit(1)

    future = client.submit(die, str(runs), pure=False)
    with pytest.raises(KilledWorker):
        future.result(timeout=30)
    assert runs.read_text() == "started\n"  # allowed-failures 0: no second worker tried it


def wait_for_log(cluster: ExternalCluster, name: str, text: str, timeout: float = 5) -> str:
    """The process's log once it mentions `text` (lowercased; Dask logs from another process)."""
    deadline = time.monotonic() + timeout
    while True:
        log = cluster.log(name).lower()
        if text in log or time.monotonic() > deadline:
            return log
        time.sleep(0.05)
