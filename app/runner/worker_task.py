"""The function a Dask worker runs for one attempt.

It only wraps `drills.core.runner.run_drill`: progress goes back through Dask's event channel, so
the worker never needs the web server's disk or database.
"""

import os
from typing import Any

from distributed import get_worker


def execute_attempt(
    attempt_id: int,
    topic: str,
    drill: str,
    knobs: dict[str, Any],
    seed: int,
    time_limit_s: float,
    memory_limit_mb: float | None,
) -> dict[str, Any]:
    # Imported on the worker only: the web process that submits this function never loads torch.
    from drills.core.limits import Limits
    from drills.core.runner import run_drill

    worker = get_worker()
    worker.log_event(
        topic,
        {"attempt": attempt_id, "kind": "started", "worker": worker.address, "pid": os.getpid()},
    )

    def emit(points: list[tuple[str, int, float]]) -> None:
        worker.log_event(topic, {"attempt": attempt_id, "kind": "points", "points": points})

    limits = Limits(time_limit_s=time_limit_s, memory_limit_mb=memory_limit_mb)
    return run_drill(drill, knobs, seed, emit=emit, limits=limits)


def execute_replay(
    drill: str,
    knobs: dict[str, Any],
    seed: int,
    time_limit_s: float,
    memory_limit_mb: float | None,
) -> dict[str, Any]:
    """Run a stored command again; nothing streams, only the final record matters."""
    from drills.core.limits import Limits
    from drills.core.runner import run_drill

    limits = Limits(time_limit_s=time_limit_s, memory_limit_mb=memory_limit_mb)
    return run_drill(drill, knobs, seed, limits=limits)
