"""Helpers of the sandbox tests: submit a program, count a uid's processes, skip without bwrap."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from drills.sandbox import Finished, Limits, WarmPool, available, run

REPO = Path(__file__).resolve().parents[2]
ENTRY = "drills.sandbox.testing"

# Tests that start sandboxes need bubblewrap and user namespaces; where those are missing they
# are skipped with the reason (on the project's machines they must run).
needs_sandbox = pytest.mark.skipif(
    available() is not None, reason=f"no sandbox can start here: {available()}"
)


# Set by a test module's `way` fixture: run each submission in a sandbox forked from a spawner
# (one started for it, without torch, and closed after it) instead of a cold one-run sandbox.
FORKED = False


def submit(code: str, limits: Limits | None = None, **options: Any) -> Finished:
    """Run `code` in a cold sandbox (or options["pool"], or one forked from a spawner of its
    own when FORKED) with `channel` and `request` in scope."""
    request = {"code": textwrap.dedent(code), **options.pop("request", {})}
    limits = limits or Limits()
    if FORKED and "pool" not in options:
        pool = WarmPool(size=1, limits=limits, preload=())
        try:
            assert pool.wait_ready(), pool.failure
            return run(ENTRY, request, limits=limits, pool=pool, **options)
        finally:
            pool.close()
    return run(ENTRY, request, limits=limits, **options)


def only_frame(finished: Finished) -> dict[str, Any]:
    assert finished.status == "ok", (finished.reason, finished.stderr[-2000:])
    assert len(finished.frames) == 1, finished.frames
    return finished.frames[0]


def processes_of(uid: int) -> list[int]:
    """Host pids of the live processes running as `uid`. Zombies do not count: a killed
    sandbox's reaper is reparented to the host's init, which reaps it in its own time."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
                if entry.stat().st_uid == uid and state != "Z":
                    pids.append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return pids


def gone(
    uid: int, within_s: float = 5.0, *, besides: set[int] | frozenset[int] = frozenset()
) -> bool:
    """Whether every process of `uid` but those `besides` has ended (killing a namespace and
    reaping are asynchronous: allow a moment)."""
    deadline = time.monotonic() + within_s
    while set(processes_of(uid)) - besides:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def safetensors_names(blob: bytes) -> set[str]:
    """The tensor names in a safetensors file, read from its JSON header (no torch needed)."""
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + size])
    return {name for name in header if name != "__metadata__"}
