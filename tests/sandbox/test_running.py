"""What run() gives back for ordinary programs, in a cold sandbox (no torch)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from drills.sandbox import Limits, available, policy, run
from drills.sandbox.availability import probe
from tests.sandbox.support import gone, needs_sandbox, only_frame, submit

pytestmark = needs_sandbox


def test_sandboxes_are_available_here() -> None:
    assert available() is None


def test_a_program_sends_frames_and_prints() -> None:
    finished = submit("print('hello')\nchannel.send({'answer': 42, 'nested': [1.5, None]})\n")
    assert only_frame(finished) == {"answer": 42, "nested": [1.5, None]}
    assert (finished.stdout, finished.stderr, finished.exit_code, finished.reason) == (
        "hello\n",
        "",
        0,
        "",
    )


def test_blobs_come_back_by_name() -> None:
    finished = submit("channel.send({'n': 1}, {'raw': bytes(range(256)) * 4, 'empty': b''})")
    assert finished.status == "ok"
    assert finished.blobs == {"raw": bytes(range(256)) * 4, "empty": b""}


def test_an_exception_is_a_traceback_and_a_reason() -> None:
    finished = submit("channel.send({'step': 1})\n1 / 0\n")
    assert (finished.status, finished.exit_code) == ("failed", 1)
    assert finished.reason == "failed with ZeroDivisionError: division by zero"
    assert 'File "<submitted>", line 2' in finished.stderr
    assert finished.frames == ({"step": 1},)


def test_an_exit_code_is_kept() -> None:
    finished = submit("import sys\nsys.exit(3)\n")
    assert (finished.status, finished.exit_code, finished.reason) == (
        "failed",
        3,
        "exited with code 3",
    )


def test_frames_reach_on_frame_live_and_in_order() -> None:
    seen: list[tuple[float, dict[str, Any]]] = []
    began = time.monotonic()
    finished = submit(
        """
        import time
        for step in range(4):
            channel.send({"step": step})
            time.sleep(0.3)
        """,
        on_frame=lambda frame: seen.append((time.monotonic(), frame)),
    )
    ended = time.monotonic()
    assert finished.status == "ok"
    assert [frame for _, frame in seen] == list(finished.frames) == [{"step": n} for n in range(4)]
    # The first frame arrived while the program still had ~0.9 s of sleeping to do.
    assert ended - seen[0][0] > 0.6
    assert seen[0][0] - began < ended - began - 0.6


def test_an_exception_in_on_frame_stops_the_sandbox_and_propagates(own_uid: int) -> None:
    def cancel(frame: dict[str, Any]) -> None:
        raise KeyboardInterrupt("cancelled by the caller")

    with pytest.raises(KeyboardInterrupt):
        submit("import time\nchannel.send({})\ntime.sleep(30)\n", on_frame=cancel)
    assert gone(own_uid)


def test_the_entry_must_be_a_drills_module() -> None:
    for entry in ("os", "runpy", "/tmp/x.py", "drills"):
        with pytest.raises(ValueError, match="under drills"):
            run(entry, {})
    missing = run("drills.sandbox.no_such_entry", {})
    assert missing.status == "failed"
    assert missing.reason.startswith("failed with ModuleNotFoundError")


def test_the_sandbox_sees_only_its_own_processes_and_name() -> None:
    frame = only_frame(
        submit(
            "import os, socket\n"
            "channel.send({'pids': os.listdir('/proc'), 'host': socket.gethostname()})"
        )
    )
    assert sorted(p for p in frame["pids"] if p.isdigit()) == ["1", "2"]
    assert frame["host"] == "sandbox"


def test_without_bwrap_nothing_runs_and_nothing_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "BWRAP", "/nonexistent/bwrap")
    assert probe() == "/nonexistent/bwrap is missing (install bubblewrap)"
    finished = run("drills.sandbox.testing", {"code": "pass"}, limits=Limits())
    assert finished.status == "unavailable"
    assert finished.reason == (
        "code cannot run on this server: /nonexistent/bwrap is missing (install bubblewrap)"
    )


def test_when_bwrap_refuses_to_start_the_run_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As on Ubuntu 24.04 (AppArmor) or in Docker (seccomp): bwrap starts, then cannot set up.
    monkeypatch.setattr(
        policy, "namespace_flags", lambda: ["--unshare-user", "--userns", "999", "--unshare-pid"]
    )
    reason = probe()
    assert reason is not None and reason.startswith("bwrap: ")
    finished = run("drills.sandbox.testing", {"code": "pass"})
    assert finished.status == "unavailable" and "bwrap: " in finished.reason
