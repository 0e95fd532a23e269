"""Cases on the silent-no-learning drill: a loop that runs to the end without a complaint while
the loss hardly moves (or moves oddly). Whether gradients exist, whether weights move and how
the gradient norm evolves tell the broken link of the step apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart

GROWS_ABOVE = 3.0  # the drill's own line for a gradient norm that keeps growing


def gradient_norm_trend(signature: Mapping[str, Any], error: str | None) -> str:
    growth = signature.get("grad_norm_growth")
    if growth is None:
        return "no-gradient-norm"
    return "keeps-growing" if growth >= GROWS_ABOVE else "steady"


def how_many_moved(signature: Mapping[str, Any], error: str | None) -> str:
    moved, total = signature.get("moved") or 0, signature.get("parameters") or 0
    if moved == 0:
        return "none-moved"
    return "all-moved" if moved == total else "some-moved"


def gradients_present(signature: Mapping[str, Any], error: str | None) -> str:
    missing, total = signature.get("grad_none") or 0, signature.get("parameters") or 0
    if missing == 0:
        return "every-tensor-has-one"
    return "none-has-one" if missing == total else "some-lack-one"


CASE_SET = CaseSet(
    drill="silent-no-learning",
    causes=(
        Cause(
            "step-wired-right",
            "healthy",
            "Nothing is wrong: every link of the step works and the loss falls at its own pace.",
            {"bug": "none"},
            "healthy",
            fix="change-nothing",
        ),
        Cause(
            "first-layer-frozen",
            "gradients",
            "The first layer still has requires_grad=False, so it gets no gradient and never "
            "moves.",
            {"bug": "requires-grad-off"},
            "frozen",
            fix="unfreeze-first-layer",
        ),
        Cause(
            "step-never-called",
            "optimizer",
            "optimizer.step() is never called: gradients are computed and thrown away.",
            {"bug": "no-step"},
            "no-step",
            fix="call-step",
        ),
        Cause(
            "gradients-never-cleared",
            "gradients",
            "optimizer.zero_grad() is never called, so each backward adds to the gradients of "
            "every earlier step.",
            {"bug": "no-zero-grad"},
            "accumulating",
            fix="clear-gradients",
        ),
        Cause(
            "loss-from-argmax",
            "graph",
            "The loss is computed from argmax'd predictions (the error rate) and forced to "
            "require grad: it has no path back to any parameter.",
            {"bug": "argmax-before-loss"},
            "no-graph",
            fix="differentiable-loss",
        ),
    ),
    experiments=(
        Experiment(
            "parameter-audit",
            "Per-parameter health table",
            "For every parameter tensor: does it require grad, is its gradient None or finite, "
            "and did the optimizer change it?",
            shows=("parameters",),
        ),
        Experiment(
            "gradient-norm-trend",
            "Track the total gradient norm",
            "Compare the gradient norm at the end of the run with its size at the start.",
            shows=("numbers",),
            observations=("grad_norm_growth",),
            reading=gradient_norm_trend,
        ),
        Experiment(
            "weights-moved",
            "Diff the weights against their initial values",
            "Count the parameter tensors that differ from their initial values at the end.",
            shows=("numbers",),
            observations=("parameters", "moved", "moved_share"),
            reading=how_many_moved,
        ),
        Experiment(
            "gradients-after-backward",
            "Inspect .grad after backward",
            "Count the parameter tensors whose .grad is still None after the last backward.",
            shows=("numbers",),
            observations=("parameters", "grad_none", "grad_finite"),
            reading=gradients_present,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the step is wired right.", Change()),
        Fix(
            "unfreeze-first-layer",
            "Set requires_grad=True on the first layer before building the optimizer.",
            Change(replace={"bug": {"requires-grad-off": "none"}}),
        ),
        Fix(
            "call-step",
            "Call optimizer.step() after backward.",
            Change(replace={"bug": {"no-step": "none"}}),
        ),
        Fix(
            "clear-gradients",
            "Call optimizer.zero_grad() before each backward.",
            Change(replace={"bug": {"no-zero-grad": "none"}}),
        ),
        Fix(
            "differentiable-loss",
            "Compute cross-entropy on the logits; keep the error rate for logging only.",
            Change(replace={"bug": {"argmax-before-loss": "none"}}),
        ),
        Fix(
            "lower-learning-rate",
            "Lower the learning rate tenfold.",
            Change(scale={"lr": 0.1}),
        ),
        Fix(
            "train-longer",
            "Train three times as long: it needs more steps to get going.",
            Change(scale={"steps": 3}),
        ),
    ),
    charts=(
        ShownChart("Loss per step", "loss", {"loss": "training loss"}),
        ShownChart("Batch accuracy", "share correct", {"accuracy": "accuracy"}),
    ),
    nuisance={"lr": (0.05, 0.1, 0.2), "steps": (150, 200, 300)},
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "a-new-training-script",
        "A new training script",
        "Your new training script for a small tabular classifier runs to the end without a single "
        "warning. Check that it learns.",
        CASE_SET,
        causes=("step-never-called", "gradients-never-cleared", "first-layer-frozen"),
    ),
    Case(
        "a-one-line-change",
        "A one-line change to the loss",
        "Backward raised an error in your training script for a small tabular classifier; after a "
        "one-line change to the loss it runs to the end. Check that it learns.",
        CASE_SET,
        causes=("loss-from-argmax", "step-never-called"),
    ),
    Case(
        "after-a-refactor",
        "After a refactor",
        "After a refactor of the training loop of a small tabular classifier, the loss still falls"
        " at the start. Is the loop still sound?",
        CASE_SET,
        causes=("gradients-never-cleared", "first-layer-frozen", "step-wired-right"),
    ),
)
