"""Runs outside the sandbox: the record of the learner's run re-read with trusted code. Each step's
weights must follow from the step before by plain gradient descent on examples of the data as
given, and the update tells which of them the step trained on. Losses are measured here, at the
weights each step met, in float64; nothing the learner's loop logged is read.

A step is read from the weights it met and those the next step met (the last one from the
trained weights that came back): their difference is -(sum over its examples of c_i times the
example's gradient) with every c_i >= 0, found by least squares. Plain SGD on the mean loss of a
batch gives every c_i = rate / batch size; an example left out of the loss gets 0; a clipped or
lower rate scales them all; a skipped step moves nothing. Measured on the reference, the right
fixtures and the wrong ones on seeds 0-4, what an honest step leaves unexplained is float32
rounding: at most 2e-4 of the update (on the smallest late steps) and 3.2e-8 of the weights'
norm; momentum, Adam or an edited label leave 0.09-0.8 of the update and 0.02-0.09 of the
weights. A step passes with up to RESIDUAL of its update plus FLOAT32 of the weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.loss_spikes.exercises.wrong_labels.problem import (
    CONFIG,
    MAX_STEPS,
    Problem,
)

RESIDUAL = 1e-3  # of the update: above it, the step is not gradient descent on its examples
FLOAT32 = 1e-6  # of the weights: what float32 rounding may leave unexplained besides
LEFT_OUT = 0.1  # an example weighing under a tenth of the step's weight is left out of it
VISIBLE = 0.01  # ... if leaving it out changes the update by 1% or more (else: counted in)
NEGATIVE = -0.1  # an example weighing below this share of the step's was climbed, not fitted
TINY = 1e-9  # of the largest example gradient: a gradient this small is left out of the solve
SURE = 3.0  # a weight this many of its error bounds above (or below) a line is surely so
ROUNDING = 1e-9  # of the update: the least error granted where the fit leaves nothing over


@dataclass(frozen=True)
class Step:
    rows: tuple[int, ...]  # the examples the model ran on (indices into the flattened data)
    trained: tuple[int, ...]  # those the update is made of (none when the weights stood still)
    # The loss the step trained on (the mean over `trained`, labels as given); for a step that
    # did not move the weights, the mean over `rows`: what the loop looked at and let pass.
    loss: float
    grad_norm: float  # of that loss
    moved: float  # how far the step moved the weights (L2)
    place: int  # the batch of the fixed order most of its examples come from
    clear_before: float  # the loss on the clear examples, correct labels, before the step
    clear_after: float

    @property
    def rate(self) -> float | None:
        """How far the step went per unit of gradient: the learning rate, for plain SGD."""
        return self.moved / self.grad_norm if self.grad_norm > 0 else None


class Unreadable(ValueError):
    """The record cannot be read as gradient descent on the data (said in the learner's terms)."""


def flat(weights: dict[str, torch.Tensor], order: dict[str, torch.Tensor]) -> torch.Tensor:
    """The weights as one float64 vector, in the order of `order`'s names (the model's state
    dict: what came back through safetensors may list them in another order)."""
    return torch.cat([weights[name].double().flatten() for name in order])


class Measure:
    """The drill's MLP (Linear-ReLU-Linear-ReLU-Linear) in float64, on weights given as one
    vector in the order of its state dict, with each example's gradient written out by hand:
    one matrix product per layer for a whole step, where autograd would take one pass per
    example (tests/exercises/test_loss_spikes_fixes.py holds the two against each other)."""

    def __init__(self, problem: Problem, initial: dict[str, torch.Tensor]) -> None:
        self.shapes = [t.shape for t in initial.values()]
        self.inputs = problem.inputs.flatten(0, 1).double()
        self.given = problem.labels.flatten()
        self.true = problem.true_labels.flatten()
        self.clear = problem.clear

    def layers(self, weights: torch.Tensor) -> list[torch.Tensor]:
        out, start = [], 0
        for shape in self.shapes:
            out.append(weights[start : start + shape.numel()].view(shape))
            start += shape.numel()
        return out

    def forward(
        self, weights: torch.Tensor, x: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
        """(the layers, the pre-activations of the two hidden layers, the logits)."""
        w1, b1, w2, b2, w3, b3 = layers = self.layers(weights)
        a1 = x @ w1.T + b1
        a2 = a1.relu() @ w2.T + b2
        return layers, [a1, a2], a2.relu() @ w3.T + b3

    def clear_loss(self, weights: torch.Tensor) -> float:
        """The loss on the examples clearly in their class, with their correct labels."""
        logits = self.forward(weights, self.inputs[self.clear])[2]
        return float(F.cross_entropy(logits, self.true[self.clear]))

    def examples(self, weights: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Each example's loss (len(rows),) and gradient (len(rows), parameters), labels as
        given, by backpropagation through the three layers."""
        x, y = self.inputs[rows], self.given[rows]
        (w1, _, w2, _, w3, _), (a1, a2), logits = self.forward(weights, x)
        losses = F.cross_entropy(logits, y, reduction="none")
        dz = logits.softmax(dim=1) - F.one_hot(y, logits.shape[1]).double()
        da2 = (dz @ w3) * (a2 > 0)
        da1 = (da2 @ w2) * (a1 > 0)
        parts = [
            da1[:, :, None] * x[:, None, :],
            da1,
            da2[:, :, None] * a1.relu()[:, None, :],
            da2,
            dz[:, :, None] * a2.relu()[:, None, :],
            dz,
        ]
        return losses, torch.cat([part.flatten(1) for part in parts], dim=1)


def read_run(
    problem: Problem,
    initial: dict[str, torch.Tensor],
    weights_at: torch.Tensor,
    rows: torch.Tensor,
    trained: dict[str, torch.Tensor],
) -> list[Step]:
    """Every step of the record, read; Unreadable when the record is not gradient descent."""
    if len(weights_at) == 0:
        raise Unreadable("your loop never ran the model with gradients on: no step was taken")
    if len(weights_at) > MAX_STEPS:
        raise Unreadable(f"your loop took more than {MAX_STEPS} steps, more than the judge follows")
    if not torch.equal(weights_at[0].double(), flat(initial, initial)):
        raise Unreadable("the first step did not start from the model's initial weights")
    measure = Measure(problem, initial)
    chain = [*weights_at.double(), flat(trained, initial)]
    clear = [measure.clear_loss(weights) for weights in chain]
    steps = []
    for index in range(len(weights_at)):
        listed = rows[index][rows[index] != -1]
        if len(listed) == 0 or bool((listed < 0).any()):
            raise Unreadable(
                f"step {index} ran the model on inputs that are not examples of the data as "
                "given: pick examples out of `inputs`, without changing their features"
            )
        losses, grads = measure.examples(chain[index], listed)
        update = chain[index + 1] - chain[index]
        moving = float(update.norm()) > 0
        kept = split_update(index, grads, update, chain[index]) if moving else None
        used = kept if kept is not None and bool(kept.any()) else torch.ones_like(losses).bool()
        counts = torch.bincount(listed // CONFIG.batch_size, minlength=CONFIG.batches)
        step = Step(
            rows=tuple(listed.tolist()),
            trained=tuple(listed[kept].tolist()) if kept is not None else (),
            loss=float(losses[used].mean()),
            grad_norm=float(grads[used].mean(dim=0).norm()),
            moved=float(update.norm()),
            place=int(counts.argmax()),
            clear_before=clear[index],
            clear_after=clear[index + 1],
        )
        steps.append(step)
    return steps


def split_update(
    index: int, grads: torch.Tensor, update: torch.Tensor, before: torch.Tensor
) -> torch.Tensor:
    """Which examples a moving step trained on (bool per row): update = -(grads.T @ c) with
    c >= 0. An example counts as left out only when its weight is surely below a tenth of the
    step's and leaving it out shows in the update; one whose weight the update cannot pin down
    (its gradient next to zero, or made up for by the others') counts as trained."""
    moved = float(update.norm())
    usable = grads.norm(dim=1) > TINY * float(grads.norm(dim=1).max())
    weights = torch.zeros(len(grads), dtype=torch.float64)
    # How far each example's gradient sits from the span of the others': a weight is known to
    # about the update's unexplained part over this (the least-squares error bound).
    apart = torch.zeros(len(grads), dtype=torch.float64)
    if bool(usable.any()):
        part = grads[usable]
        inverse = torch.linalg.pinv(part @ part.T, hermitian=True)
        weights[usable] = -(inverse @ (part @ update))
        diagonal = inverse.diagonal()
        apart[usable] = torch.where(diagonal > 0, diagonal.clamp(min=1e-300).rsqrt(), 0.0)
    unexplained = float((grads.T @ weights + update).norm())
    allowed = RESIDUAL * moved + FLOAT32 * float(before.norm())
    if not math.isfinite(unexplained) or unexplained > allowed:
        raise Unreadable(
            f"step {index} moved the weights in a way gradient descent on the examples it ran "
            f"on cannot (off by {unexplained / moved:.2g} of the step): train with plain SGD on "
            "the examples you run the model on, with their labels as given"
        )
    error = max(unexplained, ROUNDING * moved) / apart.clamp(min=1e-300)
    sure = weights >= SURE * error  # surely positive: the examples that carry the step
    if not bool(sure.any()):
        return torch.ones(len(grads), dtype=torch.bool)
    step = float(weights[sure].max())
    # Leaving the example out changed the update by 1% or more, and its weight is surely low.
    visible = step * apart >= VISIBLE * moved
    low = weights + SURE * error < LEFT_OUT * step
    if bool((visible & (weights + SURE * error < NEGATIVE * step)).any()):
        raise Unreadable(f"step {index} pushed some of its examples' loss up, not down")
    return ~(visible & low)
