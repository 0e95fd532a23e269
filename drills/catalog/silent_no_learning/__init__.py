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
from drills.core.curves import blew_up, loss_fall

BUGS = (
    "none",
    "requires-grad-off",
    "no-step",
    "no-zero-grad",
    "argmax-before-loss",
    "one-hot-argmax",
)

# Thresholds diagnose() reads the numbers with.
# "The loss falls" needs a fall of a tenth of the first loss. The first loss is one minibatch of
# 64, and a loop whose weights never move (no-step) has batches up to 3.3% off their mean on
# seeds 0-4; a short run's final loss can be one batch too, so two such strays add up to about
# 7%. A tenth is beyond that: lr 1e-5 (a 0.2% drop) is not learning, lr 0.1 (over 50%) is.
LEARNS_BY = 0.1
# A loss at some step 5 times its first value: the run blew up. Runs that overshoot and still
# learn stay under it (lr 3 peaks at 1.6-3.8x and ends 32-73% below its start); lr 10 peaks at
# 17x to 1e8x and ends above its start.
BLEW_UP = 5.0
# A loss that climbed half as high again as it started (batches stray 3% at most) and never
# fell by LEARNS_BY was knocked back by its own steps: lr 5 peaks at 2.6-5.1x, its ReLUs die
# and it ends near chance. Small rates never come near it (lr 1e-5 peaks at 1.03x).
ROSE = 1.5


class SilentNoLearning(Drill):
    slug = "silent-no-learning"
    position = 120
    title = "The loop runs, nothing learns"
    summary = "No error and no NaN, yet the model does not learn: find the broken link of the step."
    symptom = "Training runs to the end without a complaint, and the loss barely moves."
    scenario = (
        "A small MLP (two hidden layers, of 64 units by default) classifies 512 examples "
        "(8 features, 4 classes, labels drawn from a random teacher) with plain SGD, "
        "minibatches of 64, for 150 steps. The loop may hide one quiet mistake in how the "
        "step is wired. Choose one, predict what the parameter audit will show "
        "(requires_grad, gradient, update) and what the loss and the gradient norm do, then "
        "run it."
    )
    version = "4"
    healthy = "healthy"
    signature_type = SilentSignature
    knobs = (
        Knob(
            "bug",
            "choice",
            "none",
            "The quiet mistake: none; the first layer left with requires_grad=False; "
            "optimizer.step() missing; optimizer.zero_grad() missing; the loss computed from "
            "argmax'd predictions (the error rate), or from a one-hot of them (cross-entropy "
            "on that one-hot), each with loss.requires_grad_(True) added to silence "
            "backward's complaint.",
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
        Knob(
            "hidden",
            "int",
            64,
            "Units in each of the two hidden layers; the data and its labels are the same "
            "whatever the width.",
            minimum=8,
            maximum=1024,
        ),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "The step is wired correctly: every parameter gets a gradient and moves, and the "
            "loss falls (by a tenth of its first value or more) without blowing up.",
        ),
        Hypothesis(
            "frozen",
            "Some parameters have requires_grad=False: they get no gradient (None) and never "
            "move, while the rest get gradients and move without them.",
        ),
        Hypothesis(
            "no-step",
            "The optimizer never steps: every gradient is there and finite, yet no parameter "
            "moves, and the loss only wobbles from batch to batch.",
        ),
        Hypothesis(
            "accumulating",
            "The gradients are never cleared: each backward adds to what the earlier steps left "
            "in .grad, so every step follows a running sum of old gradients rather than this "
            "batch's; the gradient norm grows over the run, and the steps with it, until at a "
            "large enough rate they turn erratic or blow up.",
        ),
        Hypothesis(
            "no-graph",
            "The loss does not come out of the graph (argmax has no gradient, nor has anything "
            "computed from its result): backward reaches no parameter, every gradient is None "
            "and nothing moves.",
        ),
        Hypothesis(
            "diverges",
            "The step is wired correctly and every parameter moves, but the steps are too "
            "large: the loss blows up (at some step to 5 times its first value or more, or to "
            "a number that is not finite), or climbs half as high again and never falls a "
            "tenth below where it started.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: the step is wired correctly and every parameter moves, but the "
            "loss has fallen by less than a tenth of its first value (more than the wobble "
            "from batch to batch can explain) and never climbed far above it. The steps are "
            "too small or too few for this run to show whether the loop learns: more steps or "
            "a larger rate decides.",
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
        Observation(
            "stale_grad_steps", "Steps whose backward found an earlier step's gradient in .grad"
        ),
        Observation("grad_norm_growth", "Gradient norm at the end / at the start"),
        Observation("initial_loss", "Loss at the first step"),
        Observation(
            "final_loss",
            "Final loss (mean of the last 10% of steps)",
            "initial_loss",
            reference_for=("no-step", "no-graph"),
        ),
        Observation("max_loss", "Highest loss of the run", "initial_loss"),
        Observation("nonfinite_step", "First step whose loss or gradient was not finite"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        # In the order a step's chain runs: graph, requires_grad, gradients, step.
        if signature.get("loss_has_grad_fn") is False:
            return "no-graph"
        if signature.get("frozen"):
            return "frozen"
        # Read from .grad itself, not from the gradient norm's growth: a loop that blows up
        # grows its gradient norm too (lr 10 with the step wired right), and one that blows up
        # early can end with a smaller norm than it had at the start (lr 10 without zero_grad).
        if signature.get("stale_grad_steps"):
            return "accumulating"
        if signature.get("moved") == 0 and signature.get("grad_finite"):
            return "no-step"
        # Wired right: "healthy" also says the loss falls, which the run has to show.
        fall = loss_fall(signature)
        learned = fall is not None and fall >= LEARNS_BY
        if blew_up(signature, learned, blew_up_at=BLEW_UP, rose_at=ROSE):
            return "diverges"
        return "healthy" if learned else "inconclusive"


DRILL = SilentNoLearning()
