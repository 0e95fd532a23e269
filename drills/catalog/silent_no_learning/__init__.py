"""The loop runs, nothing learns: no error, no NaN, and a loss that hardly moves.

A training step is a chain: the loss must come out of the graph, each parameter must require a
gradient, get one, and be moved by the optimizer, and the gradients must be cleared before the
next backward. Break any link and the loop still runs. The per-parameter audit shows which link
broke: no grad_fn, requires_grad False, gradients but no updates, or gradients that keep growing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.silent_no_learning.signature import SilentSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

BUGS = ("none", "requires-grad-off", "no-step", "no-zero-grad", "argmax-before-loss")

# Thresholds diagnose() reads the numbers with.
GROWTH_ABOVE = 3.0  # the gradient norm ends 3 times larger than it started: it accumulates


class SilentNoLearning(Drill):
    slug = "silent-no-learning"
    position = 120
    title = "The loop runs, nothing learns"
    summary = "No error and no NaN, yet the model does not learn: find the broken link of the step."
    symptom = "Training runs to the end without a complaint, and the loss barely moves."
    scenario = (
        "A small MLP (two hidden layers of 64 units) classifies 512 examples (8 features, "
        "4 classes, labels drawn from a random teacher) with plain SGD, minibatches of 64, "
        "for 150 steps. The loop may hide one quiet mistake in how the step is wired. Choose "
        "one, predict what the parameter audit will show (requires_grad, gradient, update) "
        "and what the loss and the gradient norm do, then run it."
    )
    version = "1"
    healthy = "healthy"
    signature_type = SilentSignature
    knobs = (
        Knob(
            "bug",
            "choice",
            "none",
            "The quiet mistake: none; the first layer left with requires_grad=False; "
            "optimizer.step() missing; optimizer.zero_grad() missing; the loss computed from "
            "argmax'd predictions (the error rate), with loss.requires_grad_(True) added to "
            "silence backward's complaint.",
            choices=BUGS,
        ),
        Knob(
            "lr",
            "float",
            0.1,
            "SGD learning rate.",
            minimum=1e-5,
            maximum=10.0,
            log_scale=True,
        ),
        Knob("steps", "int", 150, "Minibatch SGD steps.", minimum=10, maximum=1000),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "The step is wired correctly: every parameter gets a gradient and moves, and the "
            "loss falls.",
        ),
        Hypothesis(
            "frozen",
            "Some parameters have requires_grad=False: they get no gradient (None) and never "
            "move, while the rest learn around them.",
        ),
        Hypothesis(
            "no-step",
            "The optimizer never steps: every gradient is there and finite, yet no parameter "
            "moves, and the loss only wobbles from batch to batch.",
        ),
        Hypothesis(
            "accumulating",
            "The gradients are never cleared: each backward adds to the last, the gradient norm "
            "keeps growing, and the steps become erratic or blow up.",
        ),
        Hypothesis(
            "no-graph",
            "The loss does not come out of the graph (argmax has no gradient): backward reaches "
            "no parameter, every gradient is None and nothing moves.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss (what the loop minimises)",
            ("loss",),
            "loss",
            labels={"loss": "training loss"},
        ),
        Chart(
            "accuracy",
            "Accuracy on each batch",
            ("accuracy",),
            "share correct",
            labels={"accuracy": "batch accuracy"},
        ),
        Chart(
            "grad_norm",
            "Total gradient norm",
            ("grad_norm",),
            "L2 norm",
            log_y=True,
            labels={"grad_norm": "gradient norm"},
        ),
        Chart(
            "grad",
            "Gradient norm per layer over time (grey: no gradient)",
            ("grad@*",),
            "L2 norm",
            log_y=True,
            kind="heatmap",
            labels={"grad@*": ""},
        ),
        Chart(
            "update_ratio",
            "Update / weight per layer over time (grey: no update)",
            ("update_ratio@*",),
            "||step|| / ||weights||",
            log_y=True,
            kind="heatmap",
            labels={"update_ratio@*": ""},
        ),
    )
    observations = (
        Observation("loss_has_grad_fn", "Every step's loss had a grad_fn"),
        Observation("frozen", "Parameter tensors with requires_grad=False"),
        Observation("grad_none", "Parameter tensors whose gradient is None"),
        Observation("grad_finite", "Parameter tensors with a finite, non-zero gradient"),
        Observation("moved", "Parameter tensors that moved", "parameters"),
        Observation("moved_share", "Share of parameter tensors that moved"),
        Observation("grad_norm_growth", "Gradient norm at the end / at the start"),
        Observation("initial_loss", "Loss at the first step"),
        Observation(
            "final_loss",
            "Final loss (mean of the last 10% of steps)",
            "initial_loss",
            reference_for=("no-step", "no-graph"),
        ),
        Observation("nonfinite_step", "First step whose loss or gradient was not finite"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        # In the order a step's chain runs: graph, requires_grad, gradients, step.
        if signature.get("loss_has_grad_fn") is False:
            return "no-graph"
        if signature.get("frozen"):
            return "frozen"
        growth = signature.get("grad_norm_growth")
        if growth is not None and growth >= GROWTH_ABOVE:
            return "accumulating"
        if signature.get("moved") == 0 and signature.get("grad_finite"):
            return "no-step"
        return "healthy"


DRILL = SilentNoLearning()
