"""Gradient accumulation: k micro-batches per optimizer step, meant to take the step one batch
of k×B examples would take.

Each micro-batch's loss is a mean over its B examples, and backward adds its gradient into
.grad. Divided by k first, the k gradients add up to the mean over all k×B examples: the big
batch's gradient, to float rounding. Added up as they are, the sum is k times that, pointing the
same way: every step is the step of a k times larger learning rate. Nothing fails and the curve
may look fine, until k·lr passes the rate the problem tolerates. Comparing the accumulated step
with the big batch's own step, from the same weights, shows the scale whatever the curve does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.gradient_accumulation.signature import AccumulationSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)
from drills.core.curves import loss_fall

ACCUMULATIONS = ("divided", "summed")
MICRO_BATCHES = (1, 2, 4, 8)

# Thresholds diagnose() reads the numbers with.
# The step "is" the big batch's (or k times it) within 1% of its size. On seeds 0-4 the first
# step's ratio is 1 (divided) or k (summed) within 3e-7 of it at the default rate, and within
# 4e-5 at the smallest rate, 1e-4, where the step is far smaller than the weights it is added to
# and rounding shows: the band is for that, not for the seed.
RATIO_BAND = 0.01
# The accumulated gradient equals the big batch's to float rounding: divided, the relative
# difference is at most 3e-7 at the first step and under 1e-6 at any step on seeds 0-4
# (summed: k - 1, so at least 1).
GRAD_TOLERANCE = 1e-5
# "The loss falls": to half its first value or less. A run that trains falls 98-99.6% (to near
# the least-squares minimum, about 0.01, from a first loss of 0.8-2.3); at the smallest rate,
# 1e-4, the loss falls 1-2% in 40 steps (summed at k = 8: 10-13%).
LEARNS_BY = 0.5
# The loss is read on the whole training set, so it has no batch-to-batch wobble: at a rate
# well inside what the problem tolerates it never rises above its first value (near the limit
# it may, a little: 1.2 times at k = 2 and lr 0.64 on seed 2). One that reached 10 times it, or
# a number that is not finite, blew up (summed at k = 8 and the default rate: 1e20 times and
# more). One that rose half as high again, and no further, sits on the line: its steps are at
# the edge of what the problem tolerates, and more steps decide which side it is on.
BLEW_UP = 10.0
ROSE = 1.5
# Hypotheses under which the step is k times the big batch's: the reference k applies to them.
SUMMED = ("summed", "summed-diverges")


class GradientAccumulation(Drill):
    slug = "gradient-accumulation"
    position = 65
    title = "Gradient accumulation"
    summary = (
        "Accumulate k micro-batches per step, and check the step against one big batch's: "
        "the same, or k times too large?"
    )
    symptom = (
        "To train on a larger batch than fits in memory, the loop now adds up the gradients of "
        "k micro-batches before each optimizer step. At 8 micro-batches the loss blows up, at "
        "the learning rate that trained fine with one batch per step."
    )
    scenario = (
        "A linear model (8 features and a bias) fits noisy linear targets, 512 examples, with "
        "plain SGD and a squared-error loss. Each optimizer step accumulates k micro-batches of "
        "16, and beside it a twin model set to the same weights takes the step on one big "
        "batch of the same k×16 examples: the step accumulation is meant to reproduce. Choose "
        "how each micro-batch's loss is scaled, k and the rate, predict how the two steps "
        "compare and what the loss does, then run it."
    )
    version = "1"
    healthy = "healthy"
    signature_type = AccumulationSignature
    knobs = (
        Knob(
            "accumulation",
            "choice",
            "divided",
            "How each micro-batch's loss is scaled before its backward: divided (loss / k, so "
            "the k gradients add up to the mean over all k×B examples); summed (the loss as it "
            "is, so they add up to k times that mean).",
            choices=ACCUMULATIONS,
        ),
        Knob(
            "micro_batches",
            "int",
            8,
            "k: micro-batches of 16 accumulated per optimizer step (1: no accumulation).",
            choices=MICRO_BATCHES,
        ),
        Knob(
            "lr",
            "float",
            0.16,
            "Plain SGD learning rate: the step is the rate times the accumulated gradient.",
            minimum=1e-4,
            maximum=10.0,
            log_scale=True,
        ),
        Knob("steps", "int", 40, "Optimizer steps.", minimum=1, maximum=200),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "The accumulated step is the big batch's step: each micro-batch's loss is divided "
            "by k, so the k gradients add up to the big batch's gradient to float rounding "
            "(with k = 1 there is nothing to divide, and both ways are this one). The loss "
            "falls to half its first value or less and never climbs half as high again as it "
            "started.",
        ),
        Hypothesis(
            "summed",
            "The micro-batch losses are added up, not divided by k: the accumulated gradient "
            "points the same way as the big batch's but is k times as long, so each step is "
            "the step of a k times larger rate. This run's loss never climbed half as high "
            "again as it started: the curve does not show the bug, only the step compared "
            "with the big batch's does.",
        ),
        Hypothesis(
            "summed-diverges",
            "The micro-batch losses are added up, not divided by k: each step is k times the "
            "big batch's, and at k times the rate the loss blows up (at some step to 10 times "
            "its first value or more, or to a number that is not finite).",
        ),
        Hypothesis(
            "diverges",
            "The accumulated step is the big batch's step, so accumulation is right, but the "
            "loss blows up anyway (to 10 times its first value or more, or to a number that "
            "is not finite): the learning rate itself is too large for this problem.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet. Either the step is neither the big batch's nor k times it; or "
            "the loss climbed half as high again as it started but not to 10 times (the steps "
            "sit on the edge of what the problem tolerates: more steps decide); or the step is "
            "the big batch's but the loss has fallen by less than half (too small a rate or "
            "too few steps to show that training works).",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss: each step's k×B examples, and the whole training set",
            ("loss", "set_loss"),
            "mean squared error",
            log_y=True,
            references=(Reference("least-squares minimum", "best_loss"),),
            labels={"loss": "the step's examples", "set_loss": "whole training set"},
        ),
        Chart(
            "update_ratio",
            "The accumulated step against the big batch's, at every step",
            ("update_ratio",),
            "||accumulated step|| / ||big-batch step||",
            labels={"update_ratio": "accumulated step / big-batch step"},
        ),
        Chart(
            "grad_norm",
            "Gradient norm: accumulated, and the big batch's",
            ("grad_norm", "big_batch_grad_norm"),
            "L2 norm",
            log_y=True,
            labels={
                "grad_norm": "accumulated gradient",
                "big_batch_grad_norm": "big-batch gradient",
            },
        ),
    )
    observations = (
        Observation("micro_batches", "Backward passes per optimizer step (k)"),
        Observation("examples_per_step", "Examples per optimizer step (k × B)"),
        Observation(
            "update_ratio",
            "First step: accumulated step / big-batch step (norms)",
            "micro_batches",
            reference_for=SUMMED,
        ),
        Observation("grad_scale", "First step: the accumulated gradient, in big-batch gradients"),
        Observation("grad_cosine", "First step: cosine between the two gradients"),
        Observation("grad_max_abs_diff", "First step: largest |accumulated − big-batch| entry"),
        Observation(
            "grad_relative_diff", "First step: ||accumulated − big-batch|| / ||big-batch||"
        ),
        Observation(
            "worst_grad_relative_diff", "Largest relative difference of the gradients, any step"
        ),
        Observation(
            "effective_lr",
            "The rate a big-batch step would need to take this step (lr × ratio)",
            "stability_limit",
        ),
        Observation("initial_loss", "Training-set loss before the first step"),
        Observation(
            "final_loss", "Final training-set loss (mean of the last 10% of steps)", "best_loss"
        ),
        Observation("max_loss", "Highest training-set loss of the run", "initial_loss"),
        Observation("nonfinite_step", "First step whose loss, gradient or step was not finite"),
    )
    numeric_predictions = (
        NumericPrediction(
            "update_ratio",
            "How many times the big batch's step will the first accumulated step be?",
            "times the big-batch step",
            "Each micro-batch's loss is a mean over its own B examples; count what k of them "
            "add up to, with and without the division by k.",
            reported_as="the first accumulated step was",
            relative_band=RATIO_BAND,
            absolute_band=RATIO_BAND,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        # The step first: what the accumulation did is measured, whatever the loss then did.
        ratio, k = signature.get("update_ratio"), signature.get("micro_batches")
        if ratio is None or not k:
            return "inconclusive"  # no step was compared
        difference = signature.get("grad_relative_diff")
        matches = abs(ratio - 1.0) <= RATIO_BAND and (
            difference is None or difference <= GRAD_TOLERANCE
        )
        summed = k > 1 and abs(ratio / k - 1.0) <= RATIO_BAND
        if not matches and not summed:
            return "inconclusive"
        initial, peak = signature.get("initial_loss"), signature.get("max_loss")
        rise = peak / initial if initial and peak is not None else None
        diverged = signature.get("nonfinite_step") is not None or (
            rise is not None and rise >= BLEW_UP
        )
        on_the_line = not diverged and rise is not None and rise >= ROSE
        if summed:
            return "summed-diverges" if diverged else "inconclusive" if on_the_line else "summed"
        if diverged:
            return "diverges"
        fall = loss_fall(signature)
        learned = fall is not None and fall >= LEARNS_BY
        return "healthy" if learned and not on_the_line else "inconclusive"


DRILL = GradientAccumulation()
