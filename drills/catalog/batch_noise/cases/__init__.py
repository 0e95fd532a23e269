"""Cases on the batch-noise drill: a linear classifier trained one example per step. At B = 1
the curve is the per-example losses one after another, so a single step at five times the
average is an ordinary hard example; a corrupt batch and too large a rate leave spikes of the
same look on the curve. What tells them apart is a measurement at the spike's own weights: the
batch set beside every batch the training set could give there, and the whole set's loss, which
one example's step should barely move. Too large a rate is on offer as a fix and an experiment,
not as a cause: its overconfident model ends on single-example losses far from a sound run's,
so its symptom gave it away."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.batch_noise import OUTSIDE, STEADY, UNSTABLE, WITHIN

SLOPE_BAND = 0.1  # the probe's slope reads as -1/2 within this


def spike_against_the_set(signature: Mapping[str, Any], error: str | None) -> str:
    """The spike's batch loss against the worst batch of B the training set allows there."""
    over = signature.get("spike_over_worst")
    if over is None:
        return "no-spike-read"
    if over <= WITHIN:
        return "within-the-set"
    return "far-outside-the-set" if over >= OUTSIDE else "just-outside-the-set"


def whole_set_loss(signature: Mapping[str, Any], error: str | None) -> str:
    """The largest rise of the whole training set's loss over one step."""
    if signature.get("nonfinite_step") is not None:
        return "jumps"
    jump = signature.get("set_loss_jump")
    if jump is None:
        return "no-loss-read"
    if jump >= UNSTABLE:
        return "jumps"
    return "steady" if jump <= STEADY else "wavers"


def spread_against_batch_size(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the probe's spread falls as 1/√B (it does at any fixed weights)."""
    slope = signature.get("spread_slope")
    if slope is None:
        return "no-probe"
    return "one-over-root-b" if abs(slope + 0.5) <= SLOPE_BAND else "another-slope"


def examples_per_step(signature: Mapping[str, Any], error: str | None) -> str:
    """How many examples one optimizer step takes."""
    size = signature.get("batch_size")
    return "no-batch-read" if size is None else f"{size}-per-step"


CASE_SET = CaseSet(
    drill="batch-noise",
    causes=(
        Cause(
            "only-noise",
            "healthy",
            "Nothing is wrong: with one example per step the curve shows each example's own "
            "loss, and the spike is one of the hard examples of the training set.",
            {},
            "batch-noise",
            fix="change-nothing",
        ),
        Cause(
            "corrupt-batch",
            "data",
            "One batch of the data is corrupt (its features in the wrong units, its label "
            "wrong): no example of the training set could give its loss.",
            {"bad_batch": "on"},
            "bad-batch",
            fix="drop-the-batch",
        ),
        Cause(
            "only-noise-at-16",
            "healthy",
            "Nothing is wrong: the step that stands out is a batch of 16 the training set "
            "itself gives now and then, within the spread a batch of 16 has.",
            {"batch_size": 16},
            "batch-noise",
            fix="change-nothing",
        ),
        Cause(
            "corrupt-batch-at-16",
            "data",
            "One batch of the new shard was read wrongly (features in the wrong units, labels "
            "wrong): no batch of 16 training examples could give its loss.",
            {"batch_size": 16, "bad_batch": "on"},
            "bad-batch",
            fix="drop-the-batch",
        ),
    ),
    experiments=(
        Experiment(
            "batch-shapes",
            "Print a batch's shapes",
            "Print the shapes of one training batch and a few decoded examples.",
            shows=("inputs", "numbers"),
            observations=("batch_size",),
            reading=examples_per_step,
        ),
        Experiment(
            "spike-against-the-set",
            "Set the spike beside the training set",
            "At the weights the spiking step met, compute every training example's loss: could "
            "any batch of the training set have had the spike's loss?",
            shows=("numbers",),
            observations=("spike_loss", "spike_set_loss", "worst_batch_loss", "spike_sigmas"),
            reading=spike_against_the_set,
        ),
        Experiment(
            "whole-set-loss",
            "Follow the whole training set's loss",
            "Compute the loss of all 512 examples before every step: does any single step "
            "raise it much?",
            shows=("numbers",),
            observations=("initial_loss", "final_loss", "set_loss_jump", "set_loss_jump_step"),
            reading=whole_set_loss,
        ),
        Experiment(
            "spread-probe",
            "Measure the spread against batch size",
            "At the spike's weights, draw 2,000 batches of each size from 1 to 64 and measure "
            "how far their losses scatter.",
            shows=("numbers", "tables"),
            observations=("per_example_std", "spread_at_1", "spread_at_64", "spread_slope"),
            reading=spread_against_batch_size,
        ),
        Experiment(
            "sixteen-per-step",
            "Rerun with 16 examples per step",
            "Train again from scratch on batches of 16, everything else as it was.",
            change=Change(set={"batch_size": 16}),
            shows=("numbers",),
            observations=("spike_sigmas", "spike_over_worst", "set_loss_jump"),
        ),
        Experiment(
            "rate-of-one-hundredth",
            "Rerun at a learning rate of 0.01",
            "Train again from scratch with the learning rate set to 0.01.",
            change=Change(set={"lr": 0.01}),
            shows=("numbers",),
            observations=("spike_sigmas", "spike_over_worst", "set_loss_jump"),
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the spike is noise.", Change()),
        Fix(
            "drop-the-batch",
            "Find the batch that spiked, fix how it was read, and train again.",
            Change(set={"bad_batch": "off"}),
        ),
        Fix("lower-the-rate", "Lower the learning rate to 0.01.", Change(set={"lr": 0.01})),
        Fix(
            "bigger-batch",
            "Train on 16 examples per step.",
            Change(set={"batch_size": 16}),
        ),
    ),
    charts=(
        ShownChart("Training loss", "cross-entropy (nats)", {"loss": "training loss"}, log_y=True),
    ),
    # The longest run: 400 steps after the corrupt batch the model has recovered, and the end
    # of its curve is the clean run's (shorter runs end while it still recovers, which the
    # last points show: python -m drills cases symptoms found 10-20% of draws decided).
    base={"batch_size": 1, "lr": 0.05, "steps": 600},
    symptom_observations=("initial_loss",),
)

CASES = (
    Case(
        "a-spike-far-above-the-rest",
        "A spike far above the rest",
        "A linear classifier learns 4 classes from 512 examples, one example per optimizer "
        "step. Most steps' losses sit near the average; then, some way into the run, one step "
        "shoots far above it before the curve carries on and settles. Before a longer run, "
        "the team wants to know whether that step is a problem.",
        CASE_SET,
        causes=("only-noise", "corrupt-batch"),
    ),
    Case(
        "after-a-new-shard",
        "After a new shard",
        "A new shard of data has been mixed into a classifier's training set, 16 examples per "
        "optimizer step. One step of the run stands out above its neighbours, and the curve "
        "then settles where it used to. Was the new shard read correctly?",
        CASE_SET,
        causes=("only-noise-at-16", "corrupt-batch-at-16"),
    ),
)
