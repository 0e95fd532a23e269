"""How a mixed-precision run is read: the thresholds, and diagnose() itself.

A subpackage, not a module beside train.py, so that the page showing the code a run executed
(drills/core/source.py reads the drill folder's own *.py files) shows the loop, not its judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.core.curves import loss_fall

# Thresholds diagnose() reads the numbers with.
# A step "is" the float32 twin's (or the closed form's) within 5% of its size. On seeds 0-4, at
# the first step the weights moved: clipped, both steps have norm lr x max_norm and agree within
# 3e-7; unclipped, float16 rounding (the gradients differ by 3e-4 to 5e-4 of their norm) moves
# the ratio by at most 1.5e-4; a step clipped before the unscale is the closed form within 5e-5;
# the logged norm is the twin's, or the twin's times the scale, within 2.5e-4. At any later
# step, with smaller gradients, the ratio stays within 3e-3 of 1. The band is for a larger
# model's rounding, not for these seeds.
RATIO_BAND = 0.05
# A step cut to this share of the twin's or less is "shrunk": clipping scaled gradients cuts it
# to 1 / (scale x min(1, ||g|| / max_norm)), a thousandth or less from a scale of 2^10 up.
SHRUNK = 0.5
# Skipped steps, as a share of the run: from half of them the weights stood still for most of
# it; up to a fifth is the scaler bringing its scale down at the start. In between the run sits
# on the line: a longer run tells whether the scale settles. Measured on seeds 0-4 at the
# default rate, the scaler skips about (power - 16) steps and then none, however long the run:
# 0 at 2^10 and 2^16 (1 on two seeds at lr 1e-3), 4-5 at 2^20, 15-17 at 2^32, 32-33 at 2^48,
# 47-48 at 2^64. Over 50 steps that is 0-10%, 30-34%, 64-66% and 94-96%; over 200 steps at
# 2^64, 23.5-24%.
MOST_SKIPPED = 0.5
FEW_SKIPPED = 0.2
# "The loss falls": to half its first value or less. A healthy run falls 88-94% in 50 steps
# (97-99% in 200); at the smallest rate, 1e-3, 8-11%; clipped before the unscale, 1.6-2.3%.
LEARNS_BY = 0.5
# The loss is read on the whole training set. At the default rate it never rises above its
# first value. One that reached 10 times it, or a number that is not finite, blew up (at lr 10:
# 550-960 times clipped; unclipped, 1e5 to 1e8 times and then inf); one that rose half as high
# again, and no further, sits on the line (clipped at lr 1: up to 1.64 times).
BLEW_UP = 10.0
ROSE = 1.5


def diagnose(signature: Mapping[str, Any], error: str | None) -> str:
    steps, skipped = signature.get("steps_run"), signature.get("skipped_steps")
    if not steps or skipped is None:
        return "inconclusive"  # no step was run
    # A loss that blew up first: a diverging run overflows and skips steps on the way.
    initial, peak = signature.get("initial_loss"), signature.get("max_loss")
    rise = peak / initial if initial and peak is not None else None
    if signature.get("nonfinite_step") is not None or (rise is not None and rise >= BLEW_UP):
        return "diverges"
    # Then what the scaler did: a run most of whose steps were skipped has not trained,
    # whatever its few taken steps look like.
    share = skipped / steps
    if share >= MOST_SKIPPED:
        return "overflow-skips"
    if share > FEW_SKIPPED:
        return "inconclusive"
    # Then the step taken, against the float32 twin's and against the closed form of a
    # clipped scaled step.
    ratio, predicted = signature.get("update_ratio"), signature.get("scaled_clip_ratio")
    if ratio is None:
        return "inconclusive"
    if predicted is not None and predicted <= SHRUNK and _within(ratio, predicted):
        return "clipped-scaled"
    if not _within(ratio, 1.0):
        return "inconclusive"
    # The step is right: then the norm the loop logged, against the twin's and the scale.
    norm_ratio, scale = signature.get("norm_ratio"), signature.get("step_scale")
    if norm_ratio is None or scale is None:
        return "inconclusive"
    if not _within(norm_ratio, 1.0):
        scaled = scale >= 1.0 / SHRUNK and _within(norm_ratio, scale)
        return "norm-read-scaled" if scaled else "inconclusive"
    fall = loss_fall(signature)
    learned = fall is not None and fall >= LEARNS_BY
    on_the_line = rise is not None and rise >= ROSE
    return "healthy" if learned and not on_the_line else "inconclusive"


def _within(value: float, expected: float) -> bool:
    return abs(value / expected - 1.0) <= RATIO_BAND
