"""Cooperative time and memory limits and a stop request, checked whenever a drill reports a
metric.

The worker that runs a drill should still enforce a hard limit (kill the process); these checks
let a run stop cleanly with its metrics so far and a clear status.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from drills.core.contract import Reporter

# Reading RSS costs a system call; a fifth of a second is fine-grained enough for a memory cap.
MEMORY_CHECK_INTERVAL_S = 0.2


@dataclass(frozen=True)
class Limits:
    time_limit_s: float = 60.0
    # Resident set size of the whole process, in MB. A warm worker already holds ~300 MB of
    # torch, so there is no cap by default; the web app passes one (e.g. 2048).
    memory_limit_mb: float | None = None
    # Asked at every reported metric: True stops the run there, as `cancelled` (the web app's
    # worker answers it from the learner's cancel request, read with its heartbeat).
    stop_requested: Callable[[], bool] | None = None


class TimeLimitExceeded(Exception):
    pass


class MemoryLimitExceeded(Exception):
    pass


class RunCancelled(Exception):
    pass


def process_rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


class LimitedReporter:
    """Forwards metrics to `inner`, raising once the run is over its time or memory budget."""

    def __init__(
        self,
        inner: Reporter,
        limits: Limits,
        *,
        started_at: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        rss_mb: Callable[[], float] = process_rss_mb,
    ) -> None:
        self._inner = inner
        self._limits = limits
        self._clock = clock
        self._rss_mb = rss_mb
        self._started_at = clock() if started_at is None else started_at
        self._next_memory_check = self._started_at  # check on the very first metric

    def metric(self, name: str, step: int, value: float) -> None:
        self.check(step)
        self._inner.metric(name, step, value)

    def check(self, step: int) -> None:
        stop_requested = self._limits.stop_requested
        if stop_requested is not None and stop_requested():
            raise RunCancelled(f"cancelled at step {step}, as asked")
        now = self._clock()
        elapsed = now - self._started_at
        if elapsed > self._limits.time_limit_s:
            raise TimeLimitExceeded(
                f"time limit of {self._limits.time_limit_s:g} s exceeded at step {step} "
                f"({elapsed:.2f} s elapsed)"
            )
        cap = self._limits.memory_limit_mb
        if cap is not None and now >= self._next_memory_check:
            self._next_memory_check = now + MEMORY_CHECK_INTERVAL_S
            rss = self._rss_mb()
            if rss > cap:
                raise MemoryLimitExceeded(
                    f"memory limit of {cap:g} MB exceeded at step {step} "
                    f"(process resident memory {rss:.0f} MB)"
                )
