"""Learning-rate sweep: one problem, one starting point, several learning rates side by side.

Each rate trains the same small regression from the same initial weights on the same data, so
the only difference between the curves is the step size. Too small: the loss sits still. About
right: it falls steadily. Too large: it jumps up, or overflows to infinity. A loop whose optimizer
steps nothing (gradients cleared before the step, or an optimizer built on a copy of the model)
leaves every rate flat, however large: read from what the optimizer held and found, not the curve.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.lr_sweep.signature import LrSweepSignature
from drills.catalog.lr_sweep.verdicts import FALLS, UNSTABLE, verdicts
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation
from drills.core.knobs import MAX_LIST_VALUES

OPTIMIZERS = ("sgd", "adam")
DEFAULT_LRS = (1e-6, 1e-4, 1e-2, 1.0)


class LrSweep(Drill):
    slug = "lr-sweep"
    position = 60
    title = "Learning-rate sweep"
    summary = "Train the same problem at rates a factor of 100 apart and read the curves together."
    symptom = "You picked a learning rate by habit, and you cannot tell whether it is the problem."
    scenario = (
        "A small tanh network learns to predict a smooth target from 8 input features (64 "
        "examples, the whole set in every step, squared-error loss). The sweep trains it once per "
        "learning rate, each time from the very same initial weights, for 150 steps, and records "
        "the loss, the gradient norm and the size of every step. Pick the optimizer and the "
        "rates (and, for a loop that is broken, where it clears the gradients or what its "
        "optimizer holds), predict what the sweep will show, then run it."
    )
    version = "2"
    healthy = "bracketed"
    signature_type = LrSweepSignature
    knobs = (
        Knob(
            "optimizer",
            "choice",
            "sgd",
            "sgd: plain gradient descent, the step is the rate times the gradient. adam: the step "
            "of each weight is scaled by its own gradient history, so it is close to the rate "
            "whatever the gradient's size.",
            choices=OPTIMIZERS,
        ),
        Knob(
            "zero_grad",
            "choice",
            "before-backward",
            "Where the loop clears the gradients. before-backward: each step's gradient is its "
            "own. after-backward: cleared between the backward pass and the optimizer's step.",
            choices=("before-backward", "after-backward"),
        ),
        Knob(
            "optimizer_holds",
            "choice",
            "the-model",
            "What the optimizer was built on. the-model: the weights the forward pass uses. "
            "a-copy: a copy of the model, as a deepcopy taken after building the optimizer "
            "leaves it.",
            choices=("the-model", "a-copy"),
        ),
        Knob(
            "lrs",
            "float-list",
            DEFAULT_LRS,
            f"The learning rates to try, separated by commas (1 to {MAX_LIST_VALUES} distinct "
            "values). Spacing them by a factor of 10 or 100 covers a wide range in a few runs.",
            minimum=0.0,
            maximum=10.0,
            log_scale=True,
        ),
    )
    hypotheses = (
        Hypothesis(
            "bracketed",
            "The sweep brackets a good rate: small rates barely move the loss, one in between "
            "brings it down steadily, and the largest makes it jump up or blow up.",
        ),
        Hypothesis(
            "too-cautious",
            "Every rate in the sweep is too cautious: none of them misbehaves, and the larger the "
            "rate the faster the loss falls, so the best rate lies above the sweep.",
        ),
        Hypothesis(
            "too-aggressive",
            "Every rate in the sweep is too large: at each one the loss jumps up or blows up, so "
            "the sweep has to go lower.",
        ),
        Hypothesis(
            "no-step",
            "No rate moves a single weight: every step is exactly zero, whatever the rate, so "
            "the loss stays where it started. The loop is at fault, not the rates: the optimizer "
            "steps on a gradient that is no longer there.",
        ),
        Hypothesis(
            "not-optimized",
            "No rate moves a single weight, though every weight has its gradient: the optimizer "
            "holds tensors the forward pass never uses, so the loss stays where it started. The "
            "loop is at fault, not the rates.",
        ),
        Hypothesis(
            "gap",
            "The rates are too far apart: each one either leaves the loss where it started or "
            "blows it up, and none of them trains well.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss at each learning rate",
            ("loss@*",),
            "loss (MSE)",
            log_y=True,
            labels={"loss@*": ""},
        ),
        Chart(
            "grad_norm",
            "Gradient norm",
            ("grad_norm@*",),
            "L2 norm",
            log_y=True,
            labels={"grad_norm@*": ""},
        ),
        Chart(
            "update_norm",
            "Size of each step (how far the weights moved)",
            ("update_norm@*",),
            "L2 norm of the change",
            log_y=True,
            labels={"update_norm@*": ""},
        ),
    )
    observations = (
        Observation("initial_loss", "Loss before the first step (the same for every rate)"),
        Observation("target_variance", "Loss of always predicting the average target"),
        Observation("best_lr", "Best rate: lowest final loss among the rates that stayed stable"),
        Observation("best_final_loss", "Final loss at the best rate (mean of the last 10%)"),
        Observation("flat_count", "Rates that left the loss within 10% of where it started"),
        Observation("falling_count", "Rates that brought the loss down steadily"),
        Observation("unstable_count", "Rates that made the loss jump up or overflow"),
        Observation("gradless_count", "Rates whose optimizer found no gradient at any step"),
        Observation(
            "outside_optimizer_count", "Rates whose optimizer held none of the model's weights"
        ),
        Observation(
            "largest_stable_lr",
            "Largest rate that stayed stable (gradient descent is stable below the limit)",
            "stability_limit",
            reference_for=("bracketed", "too-cautious", "gap"),
        ),
        Observation(
            "smallest_unstable_lr",
            "Smallest rate that jumped up or overflowed (compare with the limit)",
            "stability_limit",
            reference_for=("bracketed", "too-aggressive", "gap"),
        ),
        Observation("sharpness", "Largest curvature of the loss at the start (Hessian eigenvalue)"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        found = verdicts(signature)
        if found and signature.get("outside_optimizer_count") == len(found):
            return "not-optimized"
        if found and signature.get("gradless_count") == len(found):
            return "no-step"
        unstable = sum(verdict in UNSTABLE for verdict in found)
        if unstable == 0:
            return "too-cautious"
        if unstable == len(found):
            return "too-aggressive"
        if FALLS in found:
            return "bracketed"
        return "gap"  # the stable rates all sat still, the others blew up


DRILL = LrSweep()
