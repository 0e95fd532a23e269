"""The reporter the runner hands to a drill: it keeps every metric point and streams batches."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

MetricPoint = tuple[str, int, float]
Emit = Callable[[list[MetricPoint]], None]


class MetricRecorder:
    """Stores metric series and passes new points to `emit` in batches: one per
    `flush_interval_s` of the run's own CPU time, and one at least every `max_wait_s` of wall time.

    Paced by CPU time, a run sends as many batches on a busy machine as on an idle one. Paced by
    wall time, a run slowed down by sharing its core (four workers on two cores) sent three times
    as many, and each batch costs its worker, the database and every web process streaming it
    the same whatever the load: the slower the runs, the more each cost. A learner watching sees
    the curve grow in steps of the same amount of training either way. The wall-time bound keeps
    a run that waits rather than computes streaming.
    """

    def __init__(
        self,
        emit: Emit | None = None,
        *,
        flush_interval_s: float = 0.1,
        max_wait_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        # The CPU time of the thread that reports the points, the run's own: the recorder is
        # made and fed in the thread that trains (drills.core.runner.run_drill).
        work_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.series: dict[str, list[list[float]]] = {}
        self._emit = emit
        self._flush_interval_s = flush_interval_s
        self._max_wait_s = max_wait_s
        self._clock = clock
        self._work_clock = work_clock
        self._pending: list[MetricPoint] = []
        # The first point goes out at once, so the learner sees the run start without waiting.
        self._last_flush = clock() - max_wait_s
        self._last_flush_work = work_clock() - flush_interval_s

    def metric(self, name: str, step: int, value: float) -> None:
        value = float(value)
        # A NaN in a curve helps nobody and breaks strict JSON: drills must stop first and
        # say so in their signature. Failing loudly here keeps that promise checked.
        if not math.isfinite(value):
            raise ValueError(f"metric {name!r} at step {step} is {value}: report finite values")
        self.series.setdefault(name, []).append([step, value])
        if self._emit is None:
            return
        self._pending.append((name, step, value))
        if (
            self._work_clock() - self._last_flush_work >= self._flush_interval_s
            or self._clock() - self._last_flush >= self._max_wait_s
        ):
            self.flush()

    def flush(self) -> None:
        if self._emit is not None and self._pending:
            pending, self._pending = self._pending, []
            self._emit(pending)
        self._last_flush = self._clock()
        self._last_flush_work = self._work_clock()
