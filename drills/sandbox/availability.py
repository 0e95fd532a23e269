"""available(): whether sandboxes can start here, measured once by starting a tiny one."""

from __future__ import annotations

import threading

from drills.sandbox.channel import encode_request
from drills.sandbox.limits import Limits
from drills.sandbox.process import StartFailed, start

PROBE_ENTRY = "drills.sandbox.probe"
PROBE_LIMITS = Limits(wall_s=30.0, cpu_s=30)

_available_lock = threading.Lock()
_available: list[str | None] = []


def probe() -> str | None:
    """Start a tiny sandbox now (no preload) and check it ran with its filter: None when it
    did, else one line saying why not."""
    try:
        sandbox = start(PROBE_LIMITS)
    except StartFailed as error:
        return str(error)
    try:
        if not sandbox.wait_ready():
            return sandbox.start_failure().reason
        finished = sandbox.run(encode_request(PROBE_ENTRY, {}), PROBE_LIMITS)
    finally:
        sandbox.close()
    if finished.status != "ok":
        return f"a test sandbox ended {finished.status}: {finished.reason}"
    if finished.frames != ({"probe": "ok", "seccomp": True},):
        return "the seccomp filter was not in force in a test sandbox"
    return None


def available() -> str | None:
    """None when sandboxes can start here, else one line saying why not (bwrap missing, user
    namespaces blocked, seccomp unavailable, ...). Measured once, by starting a tiny sandbox."""
    with _available_lock:
        if not _available:
            _available.append(probe())
        return _available[0]
