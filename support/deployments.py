"""The two set-ups the scale-out benchmark measures, started and stopped by the benchmark itself.

- embedded: `python -m app serve` alone (SQLite in a temporary folder, a LocalCluster of
  `DRILLBOOK_WORKERS` worker processes that the web process starts as its children; its Dask
  scheduler runs inside the web process, so its CPU counts as the web process's).
- scale-out: a throw-away PostgreSQL database, `python -m app scheduler` (mutual TLS, loopback),
  one `python -m app worker --nworkers N`, and 1 or more `python -m app serve` processes on it,
  as tests/app/runner/test_scale_out.py starts them (deploy/README.md, "External cluster").

Every process gets a process group of its own (support/processes.py), and leaving the `with` block
stops every group, on errors and Ctrl-C too.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from app.core.config import ROOT
from app.runner.certificates import make_cluster_certificates, tls_files
from support.postgres import throwaway_database
from support.process_cpu import descendants_and_self
from support.processes import free_port, log_problems, start, stop, wait_until_answers

EMBEDDED_WORKER_MARK = "multiprocessing.spawn"  # LocalCluster's worker processes run `spawn_main`
WORKER_MEMORY_LIMIT = "1GiB"  # per external worker process, as in the scale-out test


@dataclass
class Deployment:
    kind: str  # "embedded" or "scale-out"
    workers: int
    database_url: str
    folder: Path
    urls: list[str] = field(default_factory=list)
    # Started here, by name; a name starts with its role: web-0, worker, scheduler.
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def web_processes(self) -> int:
        return len(self.urls)

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def launch(self, name: str, arguments: list[str], env: dict[str, str]) -> None:
        self.processes[name] = start(arguments, self.log(name), self.folder, env)

    def process_roles(self) -> dict[str, list[psutil.Process]]:
        """Every process of the deployment now, by role ("web", "worker", "scheduler", and in the
        scale-out set-up "database": the local PostgreSQL server)."""
        roles: dict[str, list[psutil.Process]] = {"web": [], "worker": [], "scheduler": []}
        if self.kind == "scale-out":
            # The whole local PostgreSQL server: on the benchmark's machine it serves nothing
            # else (its background writers included: they work for these runs too).
            roles["database"] = postgres_server_processes()
        for name, popen in self.processes.items():
            role = name.split("-")[0]
            tree = descendants_and_self(psutil.Process(popen.pid)) if popen.poll() is None else []
            if self.kind == "embedded" and role == "web":
                workers = [p for p in tree if _is_embedded_worker(p)]
                worker_trees = {q.pid for w in workers for q in descendants_and_self(w)}
                roles["worker"] += [p for p in tree if p.pid in worker_trees]
                roles["web"] += [p for p in tree if p.pid not in worker_trees]
            else:
                roles[role] += tree
        return roles

    def log_problems(self) -> list[str]:
        return [
            f"{name}: {line}" for name in self.processes for line in log_problems(self.log(name))
        ]

    def stop_all(self) -> None:
        # Web processes first (they hold the streams), then the workers, the scheduler last.
        for process in reversed(list(self.processes.values())):
            stop(process)


def postgres_server_processes() -> list[psutil.Process]:
    """The local PostgreSQL server's processes (postmaster and every backend)."""
    return [
        process
        for process in psutil.process_iter(["name"])
        if process.info["name"] in ("postgres", "postmaster")
    ]


def _is_embedded_worker(process: psutil.Process) -> bool:
    try:
        return any(EMBEDDED_WORKER_MARK in part for part in process.cmdline())
    except psutil.NoSuchProcess:
        return False


def web_environment(
    *, database_url: str, scheduler: str, certs: Path, data_dir: Path
) -> dict[str, str]:
    """A web process's settings in the scale-out set-up: PostgreSQL, the external scheduler with
    the web client's certificate, and a data folder all web processes share (session secret)."""
    client = tls_files(certs, "client")
    return {
        "DRILLBOOK_DATABASE_URL": database_url,
        "DRILLBOOK_SCHEDULER_ADDRESS": scheduler,
        "DRILLBOOK_TLS_CA_FILE": str(client.ca),
        "DRILLBOOK_TLS_CERT_FILE": str(client.cert),
        "DRILLBOOK_TLS_KEY_FILE": str(client.key),
        "DRILLBOOK_DATA_DIR": str(data_dir),
    }


def scheduler_arguments(port: int, certs: Path) -> list[str]:
    return ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--certs", str(certs)]


def worker_arguments(scheduler: str, certs: Path, *, nworkers: int = 1) -> list[str]:
    return ["worker", scheduler, "--certs", str(certs), "--nworkers", str(nworkers)] + [
        "--memory-limit",
        WORKER_MEMORY_LIMIT,
    ]


def migrate(env: dict[str, str], folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "app", "migrate"],
        cwd=folder,
        env=os.environ | {"PYTHONPATH": str(ROOT)} | env,
        check=True,
        capture_output=True,
    )


@contextmanager
def embedded(*, workers: int) -> Iterator[Deployment]:
    with tempfile.TemporaryDirectory(prefix="drillbook-bench-") as name:
        folder = Path(name)
        database_url = f"sqlite:///{folder}/drillbook.sqlite3"
        env = {
            "DRILLBOOK_DATABASE_URL": database_url,
            "DRILLBOOK_DATA_DIR": str(folder),
            "DRILLBOOK_WORKERS": str(workers),
        }
        migrate(env, folder)
        deployment = Deployment("embedded", workers, database_url, folder)
        try:
            port = free_port()
            deployment.launch("web-0", ["serve", "--port", str(port)], env)
            deployment.urls.append(f"http://127.0.0.1:{port}")
            # The web process answers once its LocalCluster's workers are warm and registered.
            wait_until_answers(deployment.urls[0], deployment.processes["web-0"])
            yield deployment
        finally:
            deployment.stop_all()
            _print_problems(deployment)


@contextmanager
def scale_out(*, workers: int, web_processes: int) -> Iterator[Deployment]:
    with (
        tempfile.TemporaryDirectory(prefix="drillbook-bench-") as name,
        throwaway_database() as database_url,
    ):
        folder = Path(name)
        certs = folder / "certs"
        make_cluster_certificates(certs)
        (folder / "data").mkdir()
        port = free_port()
        scheduler = f"tls://127.0.0.1:{port}"
        web_env = web_environment(
            database_url=database_url, scheduler=scheduler, certs=certs, data_dir=folder / "data"
        )
        migrate(web_env, folder)
        deployment = Deployment("scale-out", workers, database_url, folder)
        try:
            deployment.launch("scheduler", scheduler_arguments(port, certs), {})
            deployment.launch("worker", worker_arguments(scheduler, certs, nworkers=workers), {})
            _wait_for_registered_workers(deployment, workers)
            for index in range(web_processes):
                port = free_port()
                deployment.launch(f"web-{index}", ["serve", "--port", str(port)], web_env)
                deployment.urls.append(f"http://127.0.0.1:{port}")
            for index, url in enumerate(deployment.urls):
                wait_until_answers(url, deployment.processes[f"web-{index}"])
            yield deployment
        finally:
            deployment.stop_all()
            _print_problems(deployment)


def _wait_for_registered_workers(
    deployment: Deployment, workers: int, timeout: float = 240
) -> None:
    """Dask workers warm up (import torch, one optimizer step) before they register; measuring
    starts only once all of them have."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        registered = re.findall(r"Registered to:", deployment.log("worker").read_text())
        if len(registered) >= workers:
            return
        if any(process.poll() is not None for process in deployment.processes.values()):
            break
        time.sleep(0.5)
    tails = "\n".join(
        f"--- {name}\n{deployment.log(name).read_text(errors='replace')[-2000:]}"
        for name in deployment.processes
    )
    raise RuntimeError(f"{workers} worker(s) did not register within {timeout} s:\n{tails}")


def _print_problems(deployment: Deployment) -> None:
    if problems := deployment.log_problems():
        print("errors in the deployment's logs:", *problems[:100], sep="\n  ", file=sys.stderr)
