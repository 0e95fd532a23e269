"""What the checks of the both-masks exercise measure, outside the sandbox, from the tensors the
harness sent back and the problem rebuilt from the hidden seed (see checks.py for the decisions).

Every number is taken against a reference computed here: the problem's model (float64) run on
each held-out sequence alone, and the gradient of the mean cross-entropy over a batch's real
tokens, (softmax(logits) - one-hot(label)) / real tokens, at the logits the learner's model gave.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.padding_masks.exercises.both_masks.problem import (
    Problem,
    alone,
    is_padding,
)

CLASSES = 3


def largest_gap(yours: torch.Tensor, reference: torch.Tensor) -> float:
    """max |yours - reference|, in float64; inf when `yours` holds NaN or infinite values."""
    if not bool(torch.isfinite(yours).all()):
        return math.inf
    return float((yours.double() - reference).abs().max()) if yours.numel() else 0.0


@dataclass(frozen=True)
class ProbeReading:
    """The learner's model on the held-out sequences, against the problem's model alone."""

    shifts: dict[int, float]  # per padded length: max |your logit padded - reference alone|
    alone_gap: float  # max |your logit alone - reference alone|
    loss_padded: float | None  # your padded logits' loss per real token, at the run's length
    loss_alone: float  # the reference's loss per real token
    accuracy: float  # real tokens the reference labels right


def read_probe(
    values: Mapping[str, torch.Tensor],
    weights: Mapping[str, torch.Tensor],
    problem: Problem,
    when: str,
) -> ProbeReading | str:
    """Compare what came back under `when` ("before" / "after") with the reference at
    `weights`; a sentence instead when the tensors are missing or misshapen."""
    held_out = problem.held_out
    references = alone(dict(weights), held_out)
    lengths = [len(tokens) for tokens in held_out.tokens]
    shifts: dict[int, float] = {}
    loss_padded = None
    for pad_to in problem.probe_lengths:
        yours = values.get(f"{when}-padded-{pad_to}")
        if yours is None or tuple(yours.shape) != (len(lengths), pad_to, CLASSES):
            return f"the model's logits padded to {pad_to} did not come back"
        real = torch.cat([yours[i, :n] for i, n in enumerate(lengths)])
        shifts[pad_to] = largest_gap(real, torch.cat(references))
        if pad_to == problem.pad_to and math.isfinite(shifts[pad_to]):
            loss_padded = float(F.cross_entropy(real.double(), torch.cat(held_out.labels)))
    yours_alone = values.get(f"{when}-alone")
    if yours_alone is None or tuple(yours_alone.shape) != (sum(lengths), CLASSES):
        return "the model's logits for each sequence alone did not come back"
    reference = torch.cat(references)
    labels = torch.cat(held_out.labels)
    return ProbeReading(
        shifts=shifts,
        alone_gap=largest_gap(yours_alone, reference),
        loss_padded=loss_padded,
        loss_alone=float(F.cross_entropy(reference, labels)),
        accuracy=float((reference.argmax(dim=-1) == labels).double().mean()),
    )


def held_out_loss(weights: Mapping[str, torch.Tensor], problem: Problem) -> float:
    """The reference's loss per real token on the held-out sequences, each run alone."""
    logits = torch.cat(alone(dict(weights), problem.held_out))
    return float(F.cross_entropy(logits, torch.cat(problem.held_out.labels)))


@dataclass(frozen=True)
class StepReading:
    """The gradient one step of the learner's loop sent to the model's logits."""

    positions: int  # of the batch
    padding: int  # padding positions in the batch
    counted: int  # positions with a gradient (any nonzero or non-finite entry)
    counted_padding: int  # of them, padding
    finite: bool  # every gradient entry finite
    nonfinite_logits: int  # positions whose logits hold NaN or inf
    nonfinite_logits_padding: int  # of them, padding
    nonfinite_gradient: int  # positions whose gradient holds NaN or inf
    real_share: float  # real tokens / positions
    ratio: float  # <your gradient, reference> / ||reference||^2 at the real tokens
    difference: float  # ||your gradient - reference|| / ||reference|| at the real tokens
    cosine: float | None
    over_every_position: bool  # the gradient is that of the mean over every position


def read_step(values: Mapping[str, torch.Tensor], problem: Problem) -> StepReading | str:
    tokens, labels = problem.batches[0]
    seen, logits = values.get("step-tokens"), values.get("step-logits")
    gradient = values.get("step-grad")
    if seen is None or logits is None:
        return "no step of your loop came back"
    if tuple(seen.shape) != tuple(tokens.shape) or not torch.equal(seen.long(), tokens):
        return "your loop ran the model on other tokens than the batch it was given"
    if tuple(logits.shape) != (*tokens.shape, CLASSES):
        return "the model's logits in the step did not come back"
    if gradient is None or tuple(gradient.shape) != tuple(logits.shape):
        return "the loss sent no gradient back to the model's logits"
    padding = is_padding(tokens)
    g = gradient.double()
    touched = (g != 0).any(dim=-1)  # NaN != 0: a NaN gradient counts as one
    real = ~padding
    probabilities = torch.softmax(logits.double(), dim=-1)
    target = F.one_hot(labels, CLASSES).double()
    reference = (probabilities - target)[real] / int(real.sum())
    mine = g[real]
    size = float(reference.norm())
    finite = bool(torch.isfinite(g).all())
    if finite:
        difference = float((mine - reference).norm()) / size
        ratio = float((mine * reference).sum()) / size**2
        both = size * float(mine.norm())
        cosine = float((mine * reference).sum()) / both if both > 0 else None
        # The other loss the drill knows: the mean over every position, padding (labelled as
        # padding) included; its gradient is (softmax - one-hot) / positions everywhere.
        everywhere = (probabilities - target) / tokens.numel()
        apart = float((g - everywhere).norm()) / float(everywhere.norm())
    else:
        difference, ratio, cosine, apart = math.inf, math.nan, None, math.inf
    broken_logits = ~torch.isfinite(logits).all(dim=-1)
    return StepReading(
        positions=tokens.numel(),
        padding=int(padding.sum()),
        counted=int(touched.sum()),
        counted_padding=int((touched & padding).sum()),
        finite=finite,
        nonfinite_logits=int(broken_logits.sum()),
        nonfinite_logits_padding=int((broken_logits & padding).sum()),
        nonfinite_gradient=int((~torch.isfinite(g).all(dim=-1)).sum()),
        real_share=float(real.double().mean()),
        ratio=ratio,
        difference=difference,
        cosine=cosine,
        over_every_position=apart <= 1e-4,
    )
