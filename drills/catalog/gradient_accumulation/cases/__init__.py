"""Cases on the gradient-accumulation drill: a linear model trained with k micro-batches added
up per optimizer step. Summed micro-batch losses make every step k times the big batch's, which
is the same step as a k times larger learning rate: the loss curve of summed losses at rate r
and that of correctly divided ones at rate k·r are the same curve (to float rounding). Only a
measurement of the step itself, or a change of k, tells the loop from the rate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.gradient_accumulation import BLEW_UP, LEARNS_BY, RATIO_BAND

RATE = 0.15  # the set's learning rate: k = 8 summed steps take 8 x 0.15 = 1.2 x the gradient
TOO_LARGE = 1.2  # the divided loop's rate that takes those same steps: past 2/λmax (about 0.8)


def step_against_big_batch(signature: Mapping[str, Any], error: str | None) -> str:
    """How many big-batch steps the first accumulated step is: one, k, or something else."""
    ratio, k = signature.get("update_ratio"), signature.get("micro_batches")
    if ratio is None or not k:
        return "no-step-compared"
    if abs(ratio - 1.0) <= RATIO_BAND:
        return "same-as-big-batch"
    if abs(ratio / k - 1.0) <= RATIO_BAND:
        return "k-times-big-batch"
    return "neither"


def what_the_loss_did(signature: Mapping[str, Any], error: str | None) -> str:
    """The whole training set's loss over the run: blown up, fallen, or hardly moved."""
    initial, peak = signature.get("initial_loss"), signature.get("max_loss")
    if signature.get("nonfinite_step") is not None or (
        initial and peak is not None and peak >= BLEW_UP * initial
    ):
        return "blows-up"
    final = signature.get("final_loss")
    if initial and final is not None and final <= (1.0 - LEARNS_BY) * initial:
        return "falls"
    return "hardly-moves"


def steps_against_the_limit(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the steps taken (as a big-batch rate: lr x the step ratio) pass 2 / λmax."""
    taken, limit = signature.get("effective_lr"), signature.get("stability_limit")
    if taken is None or limit is None:
        return "no-step-compared"
    return "steps-past-the-limit" if taken > limit else "steps-within-the-limit"


CASE_SET = CaseSet(
    drill="gradient-accumulation",
    causes=(
        Cause(
            "big-batch-step",
            "healthy",
            "Nothing is wrong: each micro-batch's loss is divided by k, so the accumulated "
            "step is the step one big batch would take.",
            {"accumulation": "divided", "micro_batches": 4},
            "healthy",
            fix="change-nothing",
        ),
        Cause(
            "summed-micro-batches",
            "loss",
            "The micro-batch losses are added up without dividing by k: every step is k times "
            "the big batch's, which this rate still tolerates at k = 4.",
            {"accumulation": "summed", "micro_batches": 4},
            "summed",
            fix="divide-by-k",
            exercise="accumulation-big-batch-step",
        ),
        Cause(
            "summed-micro-batches-blow-up",
            "loss",
            "The micro-batch losses are added up without dividing by k: at k = 8 every step is "
            "8 times the big batch's, too large a step for this problem.",
            {"accumulation": "summed", "micro_batches": 8},
            "summed-diverges",
            fix="divide-by-k",
            exercise="accumulation-big-batch-step",
        ),
        Cause(
            "rate-too-large",
            "optimizer",
            "The accumulation is right, but the learning rate is too large for this problem: "
            "the big batch's own steps overshoot.",
            {"accumulation": "divided", "micro_batches": 8, "lr": TOO_LARGE},
            "diverges",
            fix="lower-the-rate",
        ),
    ),
    experiments=(
        Experiment(
            "step-against-big-batch",
            "Compare one step with the big batch's",
            "From the same weights, take the step once by accumulation and once on all the "
            "micro-batches joined into one batch: how do the two steps compare?",
            shows=("numbers", "tables"),
            observations=("micro_batches", "update_ratio", "grad_scale", "grad_cosine"),
            reading=step_against_big_batch,
        ),
        Experiment(
            "one-micro-batch",
            "Rerun with one micro-batch per step",
            "Train again with k = 1: a plain step on each batch of 16, nothing accumulated.",
            change=Change(set={"micro_batches": 1}),
            shows=("numbers",),
            observations=("initial_loss", "final_loss", "max_loss"),
            reading=what_the_loss_did,
        ),
        Experiment(
            "eight-micro-batches",
            "Rerun with eight micro-batches per step",
            "Train again accumulating 8 micro-batches of 16 per step: 128 examples a step.",
            change=Change(set={"micro_batches": 8}),
            shows=("numbers",),
            observations=("initial_loss", "final_loss", "max_loss"),
            reading=what_the_loss_did,
        ),
        Experiment(
            "lower-rate-8x",
            "Rerun with the learning rate divided by 8",
            "Train again from scratch with an 8 times smaller learning rate: does the loss "
            "still climb?",
            change=Change(scale={"lr": 0.125}),
            shows=("numbers",),
            observations=("initial_loss", "final_loss", "max_loss"),
            reading=what_the_loss_did,
        ),
        Experiment(
            "stability-limit",
            "Compute the largest stable rate",
            "Least squares has a Hessian that does not depend on the weights: compute 2 / its "
            "largest eigenvalue, the rate past which full-batch steps overshoot, and set it beside "
            "the rate the steps taken amount to.",
            shows=("numbers",),
            observations=("stability_limit", "effective_lr", "best_loss"),
            reading=steps_against_the_limit,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the loop takes the big batch's step.", Change()),
        Fix(
            "divide-by-k",
            "Divide each micro-batch's loss by k before its backward.",
            Change(replace={"accumulation": {"summed": "divided"}}),
        ),
        Fix(
            "lower-the-rate",
            "Divide the learning rate by 8.",
            Change(scale={"lr": 0.125}),
        ),
        Fix(
            "more-steps",
            "Train for twice as many steps.",
            Change(scale={"steps": 2}),
        ),
    ),
    charts=(
        ShownChart(
            "Training loss", "mean squared error", {"set_loss": "training loss"}, log_y=True
        ),
    ),
    base={"lr": RATE, "micro_batches": 8},
    # How long the run is: the verdict of every cause holds at both ends (a diverging run has
    # blown up by step 30; a healthy one has fallen to the noise floor).
    nuisance={"steps": (40, 50, 60)},
    symptom_observations=("initial_loss",),
)

CASES = (
    Case(
        "a-loop-that-fits-a-bigger-batch",
        "A loop that fits a bigger batch",
        "To train on 64 examples per step when only 16 fit in memory, a colleague's loop now "
        "accumulates 4 micro-batches before each optimizer step. The loss falls to the noise "
        "floor. Before they scale this up, they ask whether the loop takes the step one batch "
        "of 64 would.",
        CASE_SET,
        causes=("big-batch-step", "summed-micro-batches"),
    ),
    Case(
        "a-loss-that-climbs-to-the-sky",
        "A loss that climbs to the sky",
        "A linear model trained with 8 micro-batches of 16 per optimizer step: within a few "
        "dozen steps its training loss climbs by many orders of magnitude, where a plain "
        "regression should settle at the noise floor.",
        CASE_SET,
        causes=("summed-micro-batches-blow-up", "rate-too-large"),
    ),
)
