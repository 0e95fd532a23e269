"""The reporter the runner hands to a drill: it keeps every metric point and streams batches."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

MetricPoint = tuple[str, int, float]
Emit = Callable[[list[MetricPoint]], None]


class MetricRecorder:
    """Stores metric series and passes new points to `emit` at most every `flush_interval_s`."""

    def __init__(
        self,
        emit: Emit | None = None,
        *,
        flush_interval_s: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.series: dict[str, list[list[float]]] = {}
        self._emit = emit
        self._flush_interval_s = flush_interval_s
        self._clock = clock
        self._pending: list[MetricPoint] = []
        # The first point goes out at once, so the learner sees the run start without waiting.
        self._last_flush = clock() - flush_interval_s

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
        if self._clock() - self._last_flush >= self._flush_interval_s:
            self.flush()

    def flush(self) -> None:
        if self._emit is not None and self._pending:
            pending, self._pending = self._pending, []
            self._emit(pending)
        self._last_flush = self._clock()
