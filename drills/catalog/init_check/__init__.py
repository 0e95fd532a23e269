"""Check the initialisation: before any update, the loss should sit at ln(C) and every layer
should pass a signal forward and a gradient back.

A classifier that knows nothing should spread its probability evenly over C classes, so its
first loss is ln(C). A first loss far above that means the initial weights are so large the
softmax is already confidently wrong; a first loss at ln(C) with gradients near zero in the early
layers means they are so small the signal dies on the way; a layer whose ReLUs never fire passes
back exactly nothing to the layers before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.init_check.signature import InitSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    Observation,
    Reference,
)
from drills.core.curves import blew_up, loss_fall

INITS = ("default", "too-large", "too-small", "dead-relu", "wide-bias")

# Thresholds diagnose() reads the numbers with.
DEAD_LAYER_SHARE = 0.99  # a hidden layer with this share of dead units passes nothing on
# A hidden layer with this share of units that fire on no example has lost a good part of its
# width from the start. PyTorch's default start leaves at most 6-9% of a layer silent on seeds
# 0-4; biases drawn at standard deviation 1 silence 34-50% of the busiest layer.
PART_DEAD_SHARE = 0.25
TOO_LARGE_RATIO = 2.0  # a first loss twice ln(C) or more: the model starts confidently wrong
VANISHED_BELOW = 1e-6  # a first-layer gradient norm this small: no signal reaches it
# After a sound start, what the steps did decides whether "the loss falls". The batch is the
# whole set, so the loss has no batch-to-batch wobble: what a fall must beat is the model that
# learns only how often each class occurs (the output bias), which the dead and too-small starts
# show: 2-4.4% below the first loss on seeds 0-4. A fall of a fifth is over four times that.
# (In 100 steps lr 0.01 falls 5-10%, lr 0.02 straddles the line, lr 0.03 falls 45-62%.)
LEARNS_BY = 0.2
# A loss at some step 4 times its first value: the steps throw the model far past the minimum.
# Runs that overshoot and then learn stay under it (lr 0.5 peaks at 2-3.4x and ends near 0);
# from lr 1 up the peaks are 4.6x and more, and the runs end near chance or not finite.
BLEW_UP = 4.0
# A full-batch step small enough to learn with never raises the loss: one that climbed half as
# high again as it started, and never fell by LEARNS_BY, was knocked back by its own steps
# (lr 3, seed 1: up to 1.9x, then stuck near chance). Small rates never rise above the start.
ROSE = 1.5
# The starts whose first loss is ln(C): every hypothesis but a too-large one.
AT_CHANCE = ("healthy", "vanishing", "dead-units", "part-dead", "diverges", "inconclusive")


class InitCheck(Drill):
    slug = "init-check"
    position = 110
    title = "Check the initialisation"
    summary = "Read the loss at step 0 against ln(C), and each layer's activations and gradients."
    symptom = "Training starts badly: the first loss is odd, or the loss hardly moves at all."
    scenario = (
        "A ReLU network with three hidden layers of 64 units classifies 256 examples "
        "(16 features, 10 classes, labels drawn from a random teacher) with SGD and momentum, "
        "full batch. Before any update, a model that knows nothing should score ln(10) = 2.30. "
        "Choose how the weights start, predict the first loss and which layers will get a "
        "gradient, then run it."
    )
    version = "3"
    healthy = "healthy"
    signature_type = InitSignature
    knobs = (
        Knob(
            "init",
            "choice",
            "default",
            "How the weights start: PyTorch's default; every weight 10 times larger (biases "
            "zero); every weight 1000 times smaller (biases zero); the default, but the second "
            "hidden layer's bias set to -5, so none of its ReLUs ever fires; the default "
            "weights, but every hidden bias drawn at standard deviation 1 (nn.init.normal_ on "
            "the biases), so a third or more of a layer's units never fire.",
            choices=INITS,
        ),
        Knob(
            "lr",
            "float",
            0.1,
            "SGD learning rate (momentum 0.9). It changes what happens after step 0, never "
            "the step-0 numbers.",
            minimum=0.0,
            maximum=10.0,
            log_scale=True,
        ),
        Knob("steps", "int", 100, "Full-batch SGD steps.", minimum=1, maximum=1000),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "The initialisation is sound: the first loss is about ln(C), every layer passes a "
            "signal and a gradient, and the loss falls (by a fifth of its first value or more) "
            "without blowing up.",
        ),
        Hypothesis(
            "too-large",
            "The weights start too large: the logits are huge, the softmax is confidently wrong "
            "from the start, and the first loss is far above ln(C), with huge gradients.",
        ),
        Hypothesis(
            "vanishing",
            "The weights start too small: the first loss is exactly ln(C), which looks healthy, "
            "but the activations and gradients shrink layer by layer to almost nothing, so the "
            "loss barely moves.",
        ),
        Hypothesis(
            "dead-units",
            "A layer's ReLUs never fire: it outputs zeros, passes back a gradient of exactly "
            "zero, and every layer before it stays where it started.",
        ),
        Hypothesis(
            "part-dead",
            "The biases start too spread out: the first loss is about ln(C) and every layer "
            "gets a gradient, but a quarter or more of some layer's units fire on no example, "
            "so that part of its width never learns anything, while the rest of the network "
            "can still bring the loss down.",
        ),
        Hypothesis(
            "diverges",
            "The initialisation is sound (the first loss is about ln(C), every layer passes a "
            "gradient), but the steps are too large: after the start the loss blows up (to 4 "
            "times its first value or more, or to a number that is not finite), or climbs half "
            "as high again and never falls a fifth below where it started. The learning rate, "
            "not the start, is what went wrong.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: the start looks sound (the first loss is about ln(C), every layer "
            "passes a gradient), but the loss has fallen by less than a fifth of its first "
            "value, the line for a network that learns (learning only how often each class "
            "occurs gets about 4% here), and never climbed far above it. Too few steps or too "
            "small a rate for this run to show whether the network learns: more of either "
            "decides.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss",
            ("loss",),
            "cross-entropy (nats)",
            references=(Reference("ln(C): a model that knows nothing", "chance_loss"),),
            labels={"loss": "training loss"},
        ),
        Chart(
            "activations",
            "Mean |activation| per layer",
            ("act@*",),
            "mean |a|",
            log_y=True,
            labels={"act@*": ""},
        ),
        Chart(
            "dead",
            "Dead ReLU units per hidden layer",
            ("dead@*",),
            "share of units",
            labels={"dead@*": ""},
        ),
        Chart(
            "saturated",
            "Saturated softmax (top class above 0.99)",
            ("saturated",),
            "share of examples",
            labels={"saturated": "saturated share"},
        ),
        Chart(
            "grad",
            "Gradient norm per layer over time (grey: exactly 0)",
            ("grad@*",),
            "L2 norm",
            log_y=True,
            kind="heatmap",
            labels={"grad@*": ""},
        ),
        Chart(
            "update_ratio",
            "Update / weight per layer over time (grey: exactly 0)",
            ("update_ratio@*",),
            "||step|| / ||weights||",
            log_y=True,
            kind="heatmap",
            labels={"update_ratio@*": ""},
        ),
    )
    observations = (
        # The row that tells the starts apart, beside what each hypothesis implies: ln(C) for
        # every start but a too-large one, which puts it at twice ln(C) or more.
        Observation("initial_loss", "Loss at step 0", "chance_loss", reference_for=AT_CHANCE),
        Observation(
            "initial_loss",
            "Loss at step 0 (this or more: twice ln(C))",
            "too_large_loss",
            reference_for=("too-large",),
        ),
        Observation("initial_loss_ratio", "Loss at step 0 divided by ln(C)"),
        Observation("initial_logit_size", "Mean |logit| at step 0"),
        Observation("initial_saturated_share", "Examples with a saturated softmax at step 0"),
        Observation("initial_dead_share", "Most dead units in one hidden layer at step 0"),
        Observation("deadest_layer", "The hidden layer with the most dead units"),
        Observation("layers_without_gradient", "Layers whose gradient is exactly 0 at step 0"),
        Observation("initial_first_grad", "Gradient norm of the first layer at step 0"),
        Observation("initial_last_grad", "Gradient norm of the output layer at step 0"),
        Observation("max_loss", "Highest loss of the run", "initial_loss"),
        Observation(
            "final_loss",
            "Final loss (mean of the last 10% of steps)",
            "chance_loss",
            reference_for=("dead-units", "vanishing"),
        ),
        Observation("nonfinite_step", "First step whose loss or gradient was not finite"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        dead = signature.get("initial_dead_share")
        if (dead is not None and dead >= DEAD_LAYER_SHARE) or signature.get(
            "layers_without_gradient"
        ):
            return "dead-units"
        ratio = signature.get("initial_loss_ratio")
        if ratio is None and signature.get("nonfinite_step") == 0:
            return "too-large"  # not even the first loss was finite
        if ratio is not None and ratio >= TOO_LARGE_RATIO:
            return "too-large"
        first_grad = signature.get("initial_first_grad")
        if first_grad is not None and first_grad < VANISHED_BELOW:
            return "vanishing"
        if dead is not None and dead >= PART_DEAD_SHARE:
            return "part-dead"  # whatever the steps did after: the start lost its width
        # A sound start: "healthy" also says the loss falls, which the steps after it decide.
        fall = loss_fall(signature)
        learned = fall is not None and fall >= LEARNS_BY
        if blew_up(signature, learned, blew_up_at=BLEW_UP, rose_at=ROSE):
            return "diverges"
        return "healthy" if learned else "inconclusive"


DRILL = InitCheck()
