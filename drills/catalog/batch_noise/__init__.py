"""Batch size and noise: is that spike only the batch, or something real?

A batch's loss is the mean of B per-example losses, so at fixed weights it scatters around the
training set's loss with a standard deviation of σ/√B (σ: the per-example losses' own spread).
At B = 1 the curve is the per-example losses one after another: a jump to four or five times the
set's loss is an ordinary hard example. The drill reads every step's batch against the whole
training set at the same weights, so a spike is measured against what a batch of B drawn from
that set could have shown, and a probe at the spike's weights measures the spread for
B = 1…64 and fits its slope on log-log axes. A corrupt batch lies outside anything the set can
give; too large a rate shows in the whole set's loss, which one batch's step should barely move.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.batch_noise.signature import BatchNoiseSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
)

BATCH_SIZES = (1, 4, 16, 64)
BAD_BATCH = ("off", "on")

# Thresholds diagnose() reads the numbers with.
# A batch drawn from the training set can never have a loss above the mean of the B worst
# per-example losses at the same weights (spike_over_worst <= 1, exactly: rounding aside). The
# planted corrupt batch measured 5.3-95 times it on seeds 0-4 at every batch size and at both ends
# of the rate; twice it is
# far outside anything the set can give.
WITHIN = 1.0 + 1e-6
OUTSIDE = 2.0
# One step on one batch moves the whole training set's loss by at most 1-2% at a sound rate
# (measured: at most 0.013 at lr 0.05 and 0.002 at lr 0.01, every batch size, seeds 0-4). A rise
# of a tenth in one step is an update too large for the problem (lr 3: 0.19-0.66 at B <= 16).
# Between the two the run sits on the edge (lr 3 at B = 64: 0.037-0.073).
STEADY = 0.03
UNSTABLE = 0.10


class BatchNoise(Drill):
    slug = "batch-noise"
    position = 82
    title = "Batch size and noise"
    summary = (
        "Measure the loss's spread against 1/√B, and tell a spike that is only a small batch "
        "from a corrupt batch or too large a rate."
    )
    symptom = (
        "Trained one example at a time, the loss curve is a thicket: most steps sit near the "
        "average, and now and then one shoots up to four or five times it."
    )
    scenario = (
        "A linear classifier (8 features, 4 classes) learns 512 labelled examples with plain "
        "SGD, B examples per step. Each batch's loss is set beside the whole training set's "
        "losses at the same weights; after the run, a probe at the weights of the largest "
        "spike draws 2,000 batches of each size from 1 to 64 and measures how far their "
        "losses spread. Choose B, the rate and whether one batch is corrupt, predict where the "
        "largest spike will stand and what slope the spread will have, then run it."
    )
    version = "1"
    healthy = "batch-noise"
    signature_type = BatchNoiseSignature
    knobs = (
        Knob(
            "batch_size",
            "int",
            1,
            "B: examples per optimizer step, cut in order from a shuffled training set.",
            choices=BATCH_SIZES,
        ),
        Knob(
            "bad_batch",
            "choice",
            "off",
            "on: the batch at step 200 is corrupt (features twenty times too large, each label "
            "the class the data's own source finds least likely), as a shard read wrongly.",
            choices=BAD_BATCH,
        ),
        Knob(
            "lr",
            "float",
            0.05,
            "Plain SGD learning rate (no momentum).",
            minimum=0.01,
            maximum=3.0,
            log_scale=True,
        ),
        Knob(
            "steps",
            "int",
            300,
            "Optimizer steps (the corrupt batch, when on, comes at step 200).",
            minimum=250,
            maximum=600,
        ),
    )
    hypotheses = (
        Hypothesis(
            "batch-noise",
            "Only noise: the largest spike is a batch the training set itself could give at "
            "those weights (no higher than its B worst examples), and no step moves the whole "
            "set's loss by more than 3%. The spread of the batch loss falls as 1/√B.",
        ),
        Hypothesis(
            "bad-batch",
            "A corrupt batch: the largest spike's loss is at least twice the worst a batch of "
            "B training examples could have had at those weights. No amount of noise reaches "
            "it; the batch itself is wrong.",
        ),
        Hypothesis(
            "rate-too-large",
            "The rate is too large: every batch is one the training set could give, but a "
            "single step raises the whole set's loss by 10% or more (or to a number that is "
            "not finite): the updates, not the batches, make the jumps.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: the spike lies above what the set could give but not twice as "
            "high, or the whole set's loss rose by between 3% and 10% in one step.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Each step's batch loss, the training set's, and the worst a batch of B could be",
            ("loss", "set_loss", "worst_batch"),
            "cross-entropy (nats)",
            log_y=True,
            labels={
                "loss": "the step's batch",
                "set_loss": "whole training set",
                "worst_batch": "worst possible batch of B",
            },
        ),
        Chart(
            "spread",
            "Spread of the batch loss at the spike's weights; x is log2 B (0: B = 1, 6: B = 64)",
            ("spread", "spread_closed_form"),
            "std of the batch loss (nats)",
            log_y=True,
            labels={"spread": "measured", "spread_closed_form": "σ / √B"},
        ),
    )
    observations = (
        Observation("batch_size", "Examples per step (B)"),
        Observation("spike_step", "Step of the largest spike"),
        Observation("spike_loss", "The spike's batch loss", "spike_set_loss"),
        Observation("spike_sigmas", "The spike above the set's loss, in σ/√B"),
        Observation("spike_over_worst", "The spike's loss / the worst batch of B the set allows"),
        Observation("set_loss_jump", "Largest one-step rise of the whole set's loss (share)"),
        Observation("per_example_std", "σ: std of the per-example losses at the spike"),
        Observation("spread_at_1", "Measured spread at B = 1", "per_example_std"),
        Observation("spread_at_64", "Measured spread at B = 64"),
        Observation("spread_slope", "Slope of log spread against log B", "slope_theory"),
        Observation("worst_spread_error", "Largest |measured / (σ/√B) − 1| over B"),
        Observation("initial_loss", "Training-set loss before the first step"),
        Observation("final_loss", "Final training-set loss (mean of the last 10% of steps)"),
        Observation("nonfinite_step", "First step whose loss was not finite"),
    )
    numeric_predictions = (
        NumericPrediction(
            "spread_slope",
            "What slope will the spread of the batch loss have against B, on log-log axes?",
            "log spread per log B",
            "A batch's loss is the mean of B independent draws of one per-example loss.",
            reported_as="the fitted slope was",
            absolute_band=0.1,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("nonfinite_step") is not None:
            return "rate-too-large"
        over, jump = signature.get("spike_over_worst"), signature.get("set_loss_jump")
        if over is None or jump is None:
            return "inconclusive"
        # The batch first: a corrupt one is decided by its own loss, whatever its step did next.
        if over >= OUTSIDE:
            return "bad-batch"
        if over > WITHIN:
            return "inconclusive"
        if jump >= UNSTABLE:
            return "rate-too-large"
        return "batch-noise" if jump <= STEADY else "inconclusive"


DRILL = BatchNoise()
