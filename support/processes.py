"""Starting and stopping `python -m app ...` processes, each in a process group of its own:
for the benchmarks that start a deployment (support/deployments.py) and the tests that need real
processes (tests/processes.py re-exports these)."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from app.core.config import ROOT


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
    """SIGTERM to the process itself, as `docker stop` sends it: it closes its Dask workers and
    nannies in order (a SIGTERM to the whole group would kill them under it, and a nanny
    restarts one only to close it). Whatever is left of the group then gets SIGKILL, and so
    does everything when the process does not end within 10 s."""
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the whole group is gone
    process.wait(timeout=10)


def wait_until_answers(url: str, process: subprocess.Popen[bytes], timeout: float = 180) -> None:
    """Until GET {url}/login answers 200; refuse at once if the process exits meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {process.returncode} while starting")
        try:
            with urllib.request.urlopen(f"{url}/login", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"the server at {url} did not answer within {timeout} s")


def log_problems(log: Path) -> list[str]:
    """A process log's errors, each traceback in full."""
    problems: list[str] = []
    in_traceback = False
    for line in log.read_text(errors="replace").splitlines():
        if "Traceback" in line:
            in_traceback = True
        if in_traceback or "ERROR" in line or "CRITICAL" in line:
            problems.append(line)
        if in_traceback and line and not line.startswith((" ", "Traceback")):
            in_traceback = False  # the exception's own line ends the traceback
    return problems
