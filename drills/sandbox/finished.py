"""What a sandboxed run returns: how it ended, what it sent, what it printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# ok: exited 0 and every frame was well formed.
# failed: exited non-zero or by a signal, or sent a malformed reply.
# timeout: killed at the wall-clock limit.
# too-much-output: killed for writing more than the reply cap, or far more than the output cap.
# unavailable: no sandbox could start on this machine (see available()).
Status = Literal["ok", "failed", "timeout", "too-much-output", "unavailable"]


@dataclass(frozen=True)
class Finished:
    status: Status
    # The sandbox's exit code; None when it was killed (by a signal, or by us).
    exit_code: int | None
    # Every JSON frame the entry sent, in order (only the well-formed ones before any error).
    frames: tuple[dict[str, Any], ...] = ()
    # Named binary parts sent with frames.
    blobs: dict[str, bytes] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    # Seconds from the request being sent to the sandbox being gone.
    wall_s: float = 0.0
    # One plain sentence for a learner when status != "ok"; "" when ok.
    reason: str = ""
