"""A scheduler that crashes and comes back gets its workers back: `python -m app worker` runs
Dask's worker again whenever it exits by itself (a Dask worker shuts down when its scheduler
goes away), and still stops for good, in order, on SIGTERM."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client

from app.core.config import Settings
from app.runner.certificates import make_cluster_certificates, tls_files
from app.runner.cluster import external_security
from tests.processes import free_port, kill_group, start, stop

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


def connected(address: str, certs: Path) -> Client:
    files = tls_files(certs, "client")
    settings = Settings(
        environment="test",
        scheduler_address=address,
        tls_ca_file=files.ca,
        tls_cert_file=files.cert,
        tls_key_file=files.key,
    )
    return Client(address, security=external_security(settings), timeout=60)


@pytest.fixture
def certs(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "certs"
    make_cluster_certificates(folder)
    yield folder


def test_the_worker_comes_back_after_the_scheduler_was_killed(tmp_path: Path, certs: Path) -> None:
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    arguments = ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--certs", str(certs)]
    logs = {name: tmp_path / f"{name}.log" for name in ("scheduler", "worker")}
    scheduler = start(arguments, logs["scheduler"], tmp_path)
    worker = start(
        ["worker", address, "--certs", str(certs), "--memory-limit", "1GiB"],
        logs["worker"],
        tmp_path,
    )
    try:
        with connected(address, certs) as client:
            client.wait_for_workers(1, timeout=90)
        kill_group(scheduler)  # kill -9: no goodbye to the worker
        time.sleep(3)  # the worker notices, shuts down, and is started again meanwhile
        assert worker.poll() is None, logs["worker"].read_text()
        scheduler = start(arguments, logs["scheduler"], tmp_path)
        with connected(address, certs) as client:
            client.wait_for_workers(1, timeout=120)
            assert client.submit(lambda x: x + 1, 41).result(timeout=60) == 42
        assert "starting it again" in logs["worker"].read_text()
    finally:
        started = time.monotonic()
        stop(worker)
        stopped_after = time.monotonic() - started
        stop(scheduler)
    assert worker.returncode is not None and stopped_after < 10, logs["worker"].read_text()
