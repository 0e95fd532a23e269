"""`python -m app scheduler` and `python -m app worker`: Dask's own `dask scheduler` and
`dask worker`, with Drillbook's settings.

The scheduler command replaces itself with Dask's command line (`os.execvpe`) rather than start
a Scheduler inside this process: Dask's CLI already handles signals, process titles and logging,
and a supervisor (systemd, compose) then signals Dask's process directly. The worker command
runs Dask's `dask worker` as its child instead, and runs it again whenever it exits by itself: a
Dask worker whose scheduler goes away shuts down (workers no longer reconnect), so after a
scheduler crash and restart the cluster would have no workers until someone restarted each by
hand. Drillbook adds only an argument list and `DASK_*` configuration variables: plain data,
checked by tests without starting anything.
"""

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from app.runner.certificates import TlsFiles, tls_files
from app.runner.cluster_config import EXTERNAL_CLUSTER_CONFIG, WARM_PRELOAD

DEFAULT_SCHEDULER_PORT = 8786
# Between a worker's exit and its restart: a scheduler that is down stays down for seconds.
RESTART_PAUSE_S = 2.0
# Dask starts an HTTP server even without the dashboard (it serves the configured routes: none
# here); keep it on loopback, on any free port (not the scheduler's default 8787 for all).
NO_HTTP_ON_THE_NETWORK = ("--no-dashboard", "--dashboard-address", "127.0.0.1:0")


@dataclass(frozen=True)
class DaskCommand:
    argv: list[str]
    # DASK_* variables added to the inherited environment (the nanny passes them on to its
    # worker processes).
    environment: dict[str, str]

    def replace_this_process(self) -> NoReturn:
        os.execvpe(self.argv[0], self.argv, os.environ | self.environment)

    def run_again_until_stopped(self, *, pause_s: float = RESTART_PAUSE_S) -> NoReturn:
        """Run the command as a child; when it exits by itself, start it again after `pause_s`
        (it then waits for its scheduler to come back). SIGTERM or SIGINT to this process stops
        the child (with SIGTERM, which Dask takes as a request to close in order) and then this
        process, with the child's exit code."""
        stopping = threading.Event()
        child: subprocess.Popen[bytes] | None = None

        def stop(_signal: int, _frame: object) -> None:
            stopping.set()
            if child is not None and child.poll() is None:
                child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        while True:
            child = subprocess.Popen(self.argv, env=os.environ | self.environment)
            code = child.wait()
            if stopping.is_set() or stopping.wait(pause_s):
                sys.exit(code)
            print(
                f"drillbook: `dask worker` exited ({code}), its scheduler gone; starting it "
                "again, to wait for the scheduler",
                file=sys.stderr,
                flush=True,
            )


def dask_environment(config: Mapping[str, Any]) -> dict[str, str]:
    """Dask reads `DASK_A__B_C=value` as the key `a.b-c` (`dask.config.collect_env`), the value
    parsed as a Python literal: repr() writes every value so that it parses back unchanged."""
    return {
        "DASK_" + key.upper().replace(".", "__").replace("-", "_"): repr(value)
        for key, value in config.items()
    }


def scheduler_command(*, certs: Path, host: str | None, port: int) -> DaskCommand:
    """The scheduler on `host` (every interface when None), mutual TLS with the scheduler's
    certificate from `certs`."""
    argv = [
        *_dask("scheduler"),
        *_tls_arguments(_existing(tls_files(certs, "scheduler"))),
        "--port",
        str(port),
        *NO_HTTP_ON_THE_NETWORK,
    ]
    if host:
        argv += ["--host", host]
    return DaskCommand(argv, dask_environment(EXTERNAL_CLUSTER_CONFIG))


def worker_command(
    *, scheduler: str, certs: Path, nworkers: int, memory_limit: str, host: str | None = None
) -> DaskCommand:
    """`nworkers` worker processes under one nanny each, one thread per process (a run is
    single-threaded by design), warmed up before they register."""
    if not scheduler.startswith("tls://"):
        raise ValueError(f"the scheduler address must start with tls:// (got {scheduler!r})")
    argv = [
        *_dask("worker"),
        scheduler,
        *_tls_arguments(_existing(tls_files(certs, "worker"))),
        "--nworkers",
        str(nworkers),
        "--nthreads",
        "1",
        # The nanny restarts a worker that grows past this (a backstop for one huge allocation).
        "--memory-limit",
        memory_limit,
        "--preload",
        WARM_PRELOAD,
        *NO_HTTP_ON_THE_NETWORK,
    ]
    if host:
        argv += ["--host", host]
    return DaskCommand(argv, dask_environment(EXTERNAL_CLUSTER_CONFIG))


def _dask(subcommand: str) -> list[str]:
    # This interpreter, not whatever `dask` is first on PATH: the workers must import the same
    # installation of the app as the command that started them.
    return [sys.executable, "-m", "dask", subcommand]


def _tls_arguments(files: TlsFiles) -> list[str]:
    return [
        "--protocol",
        "tls",
        "--tls-ca-file",
        str(files.ca),
        "--tls-cert",
        str(files.cert),
        "--tls-key",
        str(files.key),
    ]


def _existing(files: TlsFiles) -> TlsFiles:
    """Refuse here, by name, the files Dask would otherwise report as an SSL error later."""
    missing = [str(path) for path in (files.ca, files.cert, files.key) if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"no {', '.join(missing)}: copy them from the directory `python -m app certs` wrote"
        )
    return files
