"""The problem "Batch size and noise" trains on, and the two measurements read at fixed weights.

A linear softmax classifier learns a synthetic teacher's labels (drills/kit/
synthetic_classification: each label is drawn from the teacher's probabilities, so some examples
stay hard however well the model learns). At fixed weights every example has its own loss; a
batch's loss is the mean of B of them, so its standard deviation over batches drawn at random is
the per-example standard deviation σ over √B: the closed form the probe's measured spread is set
against.

A corrupt batch, when planted, stands for a shard read wrongly: its features are twenty times too
large (wrong units) and each label is the class the teacher finds least likely. No batch of the
training set can look like it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.synthetic_classification import LabelledSet, TeacherTask, draw_set, make_teacher

TASK = TeacherTask(features=8, classes=4, sharpness=4.0)
CORRUPT_SCALE = 20.0  # the corrupt batch's features, times this


@dataclass(frozen=True)
class Spread:
    """The probe's measurement for one batch size."""

    batch_size: int
    measured: float  # std of the loss over the drawn batches
    closed_form: float  # σ / √B, σ the per-example losses' std (population)


def make_data(examples: int, generator: torch.Generator) -> LabelledSet:
    teacher = make_teacher(TASK, generator)
    return draw_set(TASK, teacher, examples, generator)


def corrupt(data: LabelledSet, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The planted bad batch: the batch's own examples, features scaled up and labels set to
    the teacher's least likely class."""
    return data.features[index] * CORRUPT_SCALE, data.teacher_probs[index].argmin(dim=1)


@torch.no_grad()
def per_example_losses(model: nn.Module, data: LabelledSet) -> torch.Tensor:
    """Every training example's cross-entropy at the model's current weights, in float64."""
    return F.cross_entropy(model(data.features), data.labels, reduction="none").double()


def worst_batch_loss(losses: torch.Tensor, batch_size: int) -> float:
    """The highest loss a batch of `batch_size` distinct training examples can have: the mean of
    the largest per-example losses. Training batches are cut from shuffled epochs, so their
    examples are distinct and no clean batch's loss can pass it."""
    return float(losses.topk(min(batch_size, len(losses))).values.mean())


@torch.no_grad()
def spread_probe(
    model: nn.Module,
    data: LabelledSet,
    sizes: Sequence[int],
    batches: int,
    generator: torch.Generator,
) -> list[Spread]:
    """For each batch size, draw `batches` batches from the training set (with replacement, the
    sampling the closed form assumes), put each through the model, and measure the std of their
    losses. The batches of one size go through as one tensor and are averaged per batch: each
    batch's loss is exactly what `F.cross_entropy` on it alone returns."""
    sigma = float(per_example_losses(model, data).std(unbiased=False))
    spreads = []
    for size in sizes:
        index = torch.randint(len(data), (batches, size), generator=generator)
        logits = model(data.features[index.flatten()])
        losses = F.cross_entropy(logits, data.labels[index.flatten()], reduction="none")
        batch_losses = losses.double().view(batches, size).mean(dim=1)
        spreads.append(
            Spread(size, float(batch_losses.std(unbiased=True)), sigma / math.sqrt(size))
        )
    return spreads


def log_log_slope(spreads: Sequence[Spread]) -> float:
    """Least-squares slope of log(measured spread) against log(batch size)."""
    xs = [math.log(item.batch_size) for item in spreads]
    ys = [math.log(item.measured) for item in spreads]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    return covariance / sum((x - mean_x) ** 2 for x in xs)
