"""Cases on the mixed-precision drill: a small MLP trained under float16 autocast with a
GradScaler. A scale far too large and clipping done before the unscale both leave a loss that
barely moves while every logged value looks ordinary: in the first the weights never change
(each step skipped), in the second they take steps a thousand times too small. A norm read
before the unscale changes nothing about training, only the number in the log. Counting the
steps that left the weights as they were, and setting a step and a norm beside a float32
twin's, tell them apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.mixed_precision.reading import (
    BLEW_UP,
    FEW_SKIPPED,
    LEARNS_BY,
    MOST_SKIPPED,
    RATIO_BAND,
    SHRUNK,
)

HEALTHY_POWER = 10  # a first scale of 1024: the gradients of this problem fit in float16 at it
TOO_LARGE_POWER = 64  # 2^64: about 48 halvings before a step is taken, more than a run has


def steps_that_changed_nothing(signature: Mapping[str, Any], error: str | None) -> str:
    """How many steps left every weight bit for bit as it was, as a share of the run."""
    steps, skipped = signature.get("steps_run"), signature.get("skipped_steps")
    if not steps or skipped is None:
        return "no-steps"
    share = skipped / steps
    if share >= MOST_SKIPPED:
        return "most-skipped"
    if share == 0:
        return "none-skipped"
    return "a-few-skipped" if share <= FEW_SKIPPED else "many-skipped"


def step_against_float32(signature: Mapping[str, Any], error: str | None) -> str:
    """The first step the weights took, as a share of the float32 twin's from the same weights."""
    ratio = signature.get("update_ratio")
    if ratio is None:
        return "no-step-taken"
    if abs(ratio - 1.0) <= RATIO_BAND:
        return "same-as-float32"
    return "far-smaller" if ratio <= SHRUNK else "different"


def norm_against_float32(signature: Mapping[str, Any], error: str | None) -> str:
    """The gradient norm the loop logged, in float32 norms: one, or the scale."""
    ratio, scale = signature.get("norm_ratio"), signature.get("step_scale")
    if ratio is None or scale is None:
        return "no-step-taken"
    if abs(ratio - 1.0) <= RATIO_BAND:
        return "same-as-float32"
    if abs(ratio / scale - 1.0) <= RATIO_BAND:
        return "scale-times-float32"
    return "different"


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


LOSS_NUMBERS = ("initial_loss", "final_loss")

CASE_SET = CaseSet(
    drill="mixed-precision",
    causes=(
        Cause(
            "scaler-working",
            "healthy",
            "Nothing is wrong: the scaler takes every step, each one is the float32 step to "
            "rounding, and the loop reads the gradient norm after unscaling it.",
            {"unscale": "first", "clip": "off"},
            "healthy",
            fix="change-nothing",
        ),
        Cause(
            "first-scale-too-large",
            "optimizer",
            "The scaler starts at 2^64: the scaled gradients overflow float16 at every step, "
            "so each step is skipped and the weights never change while the scale halves.",
            {"init_scale_power": TOO_LARGE_POWER},
            "overflow-skips",
            fix="lower-the-first-scale",
        ),
        Cause(
            "clipping-scaled-gradients",
            "gradients",
            "The loop clips before it unscales: clipping at norm 1 acts on the gradient times "
            "the scale, so after the unscale every step is about a thousandth of its size.",
            {"unscale": "late", "clip": "on"},
            "clipped-scaled",
            fix="unscale-first",
            exercise="mixed-precision-float32-step",
        ),
        Cause(
            "norm-of-scaled-gradients",
            "evaluation",
            "Training is fine, but the loop measures the gradient norm before unscaling: the "
            "norm it logs is the true one times the scale.",
            {"unscale": "late", "clip": "off"},
            "norm-read-scaled",
            fix="unscale-first",
        ),
    ),
    experiments=(
        Experiment(
            "count-unchanged-steps",
            "Count the steps that changed nothing",
            "Compare every weight before and after each optimizer step, and read the scaler's "
            "scale as you go: how many steps left the weights exactly as they were?",
            shows=("numbers",),
            observations=("skipped_steps", "initial_scale", "final_scale", "skips_without_halving"),
            reading=steps_that_changed_nothing,
        ),
        Experiment(
            "step-against-float32",
            "Take the first step twice",
            "From the same weights and the same batch, let a float32 copy of the model take the "
            "step the loop means to take: how does the loop's own step compare in size?",
            shows=("numbers", "tables"),
            observations=("first_taken_step", "update_ratio", "update_cosine"),
            reading=step_against_float32,
        ),
        Experiment(
            "norm-against-float32",
            "Check the logged gradient norm",
            "Set the gradient norm the loop logs beside the norm of the float32 copy's gradient, "
            "at the same weights and batch.",
            shows=("numbers",),
            observations=("logged_grad_norm", "float32_grad_norm", "norm_ratio", "step_scale"),
            reading=norm_against_float32,
        ),
        Experiment(
            "health-table",
            "Read the parameter health table",
            "For every parameter: is there a gradient, is it finite, and did the weight move?",
            shows=("parameters",),
        ),
        Experiment(
            "rerun-in-float32",
            "Rerun the loop in float32",
            "Train again from scratch with autocast off and the scaler disabled, everything else "
            "the same.",
            change=Change(set={"precision": "float32"}),
            shows=("numbers",),
            observations=LOSS_NUMBERS,
            reading=what_the_loss_did,
        ),
        Experiment(
            "smaller-first-scale",
            "Rerun with the scaler starting at 1024",
            "Train again from scratch with GradScaler(init_scale=1024): does the loss fall now?",
            change=Change(set={"init_scale_power": HEALTHY_POWER}),
            shows=("numbers",),
            observations=LOSS_NUMBERS,
            reading=what_the_loss_did,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the scaler and the loop are right.", Change()),
        Fix(
            "unscale-first",
            "Call scaler.unscale_(optimizer) right after backward, before the loop reads or "
            "clips any gradient.",
            Change(replace={"unscale": {"late": "first"}}),
        ),
        Fix(
            "lower-the-first-scale",
            "Start the scaler at a scale of 1024.",
            Change(set={"init_scale_power": HEALTHY_POWER}),
        ),
        Fix("stop-clipping", "Stop clipping the gradients.", Change(set={"clip": "off"})),
        Fix("raise-the-rate", "Raise the learning rate tenfold.", Change(scale={"lr": 10.0})),
    ),
    charts=(
        ShownChart(
            "Training loss",
            "mean squared error",
            {
                "loss": "loss the loop logs",
                "set_loss": "training loss",
                "float32_set_loss": "training loss of the float32 loop",
            },
            log_y=True,
        ),
    ),
    # 40 steps: a first scale of 2^64 needs about 48 halvings, so no step of the run is taken.
    base={"steps": 40},
    # The rate: every cause's verdict holds at both ends (clipped, the steps have norm lr
    # whatever the rate; unclipped, the loop trains at either).
    nuisance={"lr": (0.15, 0.25)},
    symptom_observations=("initial_loss", "float32_final_loss"),
)

CASES = (
    Case(
        "a-loop-that-stands-still",
        "A float16 loop that stands still",
        "To save memory, a colleague moved a small regression model to float16 autocast with "
        "a gradient scaler, keeping their gradient clipping at norm 1. Every logged loss is an "
        "ordinary number, yet after 40 steps the training loss has barely moved, where the "
        "same loop in float32 falls to a fraction of where it started.",
        CASE_SET,
        causes=("first-scale-too-large", "clipping-scaled-gradients"),
    ),
    Case(
        "norms-to-clip-by",
        "Norms to clip by",
        "A colleague's regression loop now runs under float16 autocast with a gradient scaler, "
        "and its loss falls as it did in float32. They have not clipped gradients yet; before "
        "they pick a clipping threshold from the gradient norms the loop logs, they ask "
        "whether those norms can be trusted.",
        CASE_SET,
        causes=("scaler-working", "norm-of-scaled-gradients"),
    ),
)
