"""run(): one entry module in one sandbox, from a warm pool or started cold."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drills.sandbox.availability import available
from drills.sandbox.channel import encode_request
from drills.sandbox.finished import Finished
from drills.sandbox.limits import DEFAULT_LIMITS, Limits
from drills.sandbox.process import StartFailed, start

if TYPE_CHECKING:
    from drills.sandbox.pool import WarmPool


def unavailable(reason: str) -> Finished:
    return Finished("unavailable", None, reason=f"code cannot run on this server: {reason}")


def run(
    entry: str,
    request: dict[str, Any],
    *,
    limits: Limits = DEFAULT_LIMITS,
    on_frame: Callable[[dict[str, Any]], None] | None = None,
    pool: WarmPool | None = None,
) -> Finished:
    """Run `entry` (a module under drills. defining main(request, channel)) in a sandbox taken
    from `pool` (if it has one with the same baked limits ready or starting) or started now,
    and return what came back. `on_frame` is called on this thread as each frame arrives; if it
    raises, the sandbox is killed and the exception propagates (a way to cancel). Never raises
    for anything the code inside does; raises ValueError for a bad entry name or a request that
    is too large."""
    body = encode_request(entry, request)
    reason = available()
    if reason is not None:
        return unavailable(reason)
    if pool is not None:
        with pool.lease(limits) as sandbox:
            if sandbox is not None:
                return sandbox.run(body, limits, on_frame)
    return run_cold(body, limits, on_frame)


def run_cold(
    body: bytes, limits: Limits, on_frame: Callable[[dict[str, Any]], None] | None
) -> Finished:
    try:
        sandbox = start(limits)
    except StartFailed as error:
        return unavailable(str(error))
    try:
        if not sandbox.wait_ready():
            failure = sandbox.start_failure()
            if failure.status == "unavailable":
                return unavailable(failure.reason)
            return failure
        finished = sandbox.run(body, limits, on_frame)
    finally:
        sandbox.close()
    return finished
