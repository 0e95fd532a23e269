"""Summaries of a loss curve that drills put in their signatures."""

from __future__ import annotations

import math
from collections.abc import Sequence

TAIL_FRACTION = 0.1  # "final" means the last 10% of steps: one lucky step should not count


def tail(values: Sequence[float]) -> Sequence[float]:
    count = max(1, math.ceil(len(values) * TAIL_FRACTION))
    return values[-count:]


def tail_mean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    last = tail(values)
    return sum(last) / len(last)


def tail_std(values: Sequence[float]) -> float | None:
    """Population standard deviation of the tail: how much the loss still jumps per step."""
    if not values:
        return None
    last = tail(values)
    mean = sum(last) / len(last)
    return math.sqrt(sum((value - mean) ** 2 for value in last) / len(last))
