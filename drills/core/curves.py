"""Summaries of a loss curve that drills put in their signatures and read in their verdicts.

No torch here: a drill's description imports these in the web process."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

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


def loss_fall(signature: Mapping[str, Any]) -> float | None:
    """How far the loss fell, as a share of the first loss (negative if it rose), from a
    signature's `initial_loss` and `final_loss`."""
    initial, final = signature.get("initial_loss"), signature.get("final_loss")
    if initial is None or final is None or initial <= 0:
        return None
    return float(1.0 - final / initial)


def blew_up(
    signature: Mapping[str, Any], learned: bool, *, blew_up_at: float, rose_at: float
) -> bool:
    """Whether the steps were too large: the loss went non-finite, rose at some step to
    `blew_up_at` times its first value (the peak is read, not the end: a run that blows up can
    settle back near chance), or rose to `rose_at` times it and the run did not learn (a step
    small enough to learn never raises a full-batch loss)."""
    if signature.get("nonfinite_step") is not None:
        return True
    initial, peak = signature.get("initial_loss"), signature.get("max_loss")
    if initial is None or peak is None:
        return False
    return bool(peak >= blew_up_at * initial or (peak >= rose_at * initial and not learned))
