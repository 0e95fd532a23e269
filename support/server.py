"""A Drillbook server of its own for a benchmark or a test: `python -m app serve` on a free
loopback port, on the embedded default (SQLite in a temporary folder, local workers), stopped at
the end with its log's errors printed."""

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.processes import log_problems, wait_until_answers

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Server:
    url: str
    database_url: str
    log: Path

    def log_problems(self) -> list[str]:
        """The server log's errors, each traceback in full."""
        return log_problems(self.log)


@contextmanager
def started_server(*, workers: int = 2) -> Iterator[Server]:
    """`python -m app serve` on a free loopback port with a fresh SQLite database."""
    with tempfile.TemporaryDirectory(prefix="drillbook-load-") as folder:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        database_url = f"sqlite:///{folder}/drillbook.sqlite3"
        env = os.environ | {
            "DRILLBOOK_DATABASE_URL": database_url,
            "DRILLBOOK_DATA_DIR": folder,
            "DRILLBOOK_WORKERS": str(workers),
        }
        python = sys.executable
        subprocess.run([python, "-m", "app", "migrate"], cwd=ROOT, env=env, check=True)
        log = open(Path(folder) / "server.log", "w")  # noqa: SIM115 (closed below)
        server = subprocess.Popen(
            [python, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        running = Server(f"http://127.0.0.1:{port}", database_url, Path(folder) / "server.log")
        try:
            wait_until_answers(running.url, server, timeout=120)
            yield running
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
            if problems := running.log_problems():
                print("server log errors:", *problems[:200], sep="\n  ", file=sys.stderr)
