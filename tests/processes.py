"""Starting and stopping `python -m app ...` processes for tests that need real ones."""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from app.config import ROOT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(
    arguments: list[str], log: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`python -m app ...` in a process group of its own (Dask's nanny and worker processes
    join it), so teardown can stop all of them at once."""
    with log.open("ab") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "app", *arguments],
            # The app's code comes from this checkout; nothing else of the web server's disk.
            cwd=cwd,
            env=os.environ | {"PYTHONPATH": str(ROOT)} | (env or {}),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """kill -9 the process and everything it started, at once."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


def stop(process: subprocess.Popen[bytes]) -> None:
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:
            return  # the whole group is gone
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
        if sent == signal.SIGTERM:
            # The leader exited; make sure no nanny child outlived it.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
