"""Stopping the server on the embedded default: Ctrl-C in a terminal reaches the whole process
group (the web process and its worker processes at once)."""

import os
import signal
import tempfile
from pathlib import Path

import pytest

from support.deployments import migrate
from support.processes import free_port, kill_group, start, wait_until_answers

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_ctrl_c_stops_the_server_and_its_workers_cleanly() -> None:
    with tempfile.TemporaryDirectory(prefix="drillbook-shutdown-") as name:
        folder = Path(name)
        env = {
            "DRILLBOOK_DATABASE_URL": f"sqlite:///{folder}/drillbook.sqlite3",
            "DRILLBOOK_DATA_DIR": str(folder),
            "DRILLBOOK_WORKERS": "2",
        }
        migrate(env, folder)
        log = folder / "serve.log"
        port = free_port()
        server = start(["serve", "--port", str(port)], log, folder, env)
        try:
            wait_until_answers(f"http://127.0.0.1:{port}", server)
            os.killpg(server.pid, signal.SIGINT)
            exit_code = server.wait(timeout=60)
        finally:
            kill_group(server)
        output = log.read_text(errors="replace")
    assert exit_code == 0, output[-3000:]
    # The workers were closed by their parent, not killed under it by the signal.
    assert "Traceback" not in output, output[-3000:]
    assert "Restarting worker" not in output
    assert "exited with status 1" not in output
    assert "Application shutdown complete." in output
