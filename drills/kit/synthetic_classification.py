"""A synthetic classification task whose true answer is known, and the small MLPs that learn it.

A fixed random "teacher" turns each input into class probabilities and the label is *drawn* from
them, so even a perfect model cannot predict every label: the teacher's own expected loss is a
floor no model can beat on fresh data. Training, validation and held-out sets are independent
draws from the same teacher, so any difference between their losses comes from how, and on what,
each loss was measured, never from a shift in the data.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.mode_blind import ModeBlindDropout, ModeBlindNoise


@dataclass(frozen=True)
class TeacherTask:
    features: int = 8
    classes: int = 4
    # Scale of the teacher's logits: higher means surer probabilities, so less label noise.
    sharpness: float = 6.0


@dataclass(frozen=True)
class LabelledSet:
    features: torch.Tensor  # (n, features) float32, standard normal
    labels: torch.Tensor  # (n,) int64, drawn from teacher_probs
    teacher_probs: torch.Tensor  # (n, classes) the teacher's probabilities for each example

    def __len__(self) -> int:
        return len(self.labels)


def make_teacher(task: TeacherTask, generator: torch.Generator) -> torch.Tensor:
    """A random linear teacher: logits = sharpness * x @ weights, with unit-variance logits."""
    weights = torch.randn(task.features, task.classes, generator=generator)
    return weights / math.sqrt(task.features)


def draw_set(
    task: TeacherTask, teacher: torch.Tensor, examples: int, generator: torch.Generator
) -> LabelledSet:
    features = torch.randn(examples, task.features, generator=generator)
    probs = (task.sharpness * features @ teacher).softmax(dim=-1)
    labels = torch.multinomial(probs, 1, generator=generator).squeeze(1)
    return LabelledSet(features=features, labels=labels, teacher_probs=probs)


def concat_sets(first: LabelledSet, second: LabelledSet) -> LabelledSet:
    return LabelledSet(
        features=torch.cat([first.features, second.features]),
        labels=torch.cat([first.labels, second.labels]),
        teacher_probs=torch.cat([first.teacher_probs, second.teacher_probs]),
    )


def select_rows(data: LabelledSet, rows: torch.Tensor | slice) -> LabelledSet:
    """The examples `rows` picks (indices, a mask or a slice), each with its label."""
    return LabelledSet(data.features[rows], data.labels[rows], data.teacher_probs[rows])


def first_examples(data: LabelledSet, count: int) -> LabelledSet:
    return select_rows(data, slice(count))


def repeat_rows(data: LabelledSet, rows: int) -> LabelledSet:
    """The examples repeated in turn until there are `rows` of them, each with its label."""
    if rows == len(data):
        return data
    return select_rows(data, torch.arange(rows) % len(data))


def count_distinct(features: torch.Tensor) -> int:
    """How many different examples the rows hold (exact matches count once)."""
    return len(torch.unique(features, dim=0))


def exact_matches(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """A mask over `rows`: the row's features occur, bit for bit, somewhere in `table`.

    The check worth running on any split before trusting its validation loss."""
    # Give every distinct row an id, then ask which of the rows' ids also occur in the table.
    _, ids = torch.unique(torch.cat([table, rows]), dim=0, return_inverse=True)
    return torch.isin(ids[len(table) :], ids[: len(table)])


def noise_floor(data: LabelledSet) -> float:
    """The teacher's expected cross-entropy on these inputs: the mean entropy of its probabilities.

    A model that learned the teacher exactly would average this loss on fresh labels; a loss
    clearly below it on some set means the model has memorised that set's particular labels.
    """
    probs = data.teacher_probs.double()
    entropy = -(probs * probs.clamp_min(1e-300).log()).sum(dim=-1)
    return float(entropy.mean())


class InputNoise(nn.Module):
    """Augmentation as a layer: Gaussian noise on the inputs, only while the model is training.

    Living inside the model, it is switched off by `model.eval()` exactly like dropout.
    """

    def __init__(self, std: float) -> None:
        super().__init__()
        self.std = std

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.std > 0:
            return x + self.std * torch.randn_like(x)
        return x


def build_mlp(
    task: TeacherTask,
    hidden: int,
    *,
    dropout: float,
    input_noise: float = 0.0,
    mode_blind: bool = False,
) -> nn.Sequential:
    """Mode-blind: the noise and dropout ignore eval mode (drills/kit/mode_blind.py)."""
    noise_layer = ModeBlindNoise if mode_blind else InputNoise
    dropout_layer = ModeBlindDropout if mode_blind else nn.Dropout
    return nn.Sequential(
        noise_layer(input_noise),
        nn.Linear(task.features, hidden),
        nn.ReLU(),
        dropout_layer(dropout),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        dropout_layer(dropout),
        nn.Linear(hidden, task.classes),
    )


def mean_loss(model: nn.Module, data: LabelledSet, *, train_mode: bool) -> float:
    """Cross-entropy over a whole set, with dropout and input noise on or off as asked.

    The model's previous mode is restored afterwards, and any masks or noise the pass draws come
    from a copy of torch's generator, so a measurement never changes training: the batches that
    follow draw what they would have drawn without it.
    """
    was_training = model.training
    model.train(train_mode)
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            return float(F.cross_entropy(model(data.features), data.labels))
    finally:
        model.train(was_training)


def sets_digest(*sets: LabelledSet) -> str:
    sha = hashlib.sha256()
    for data in sets:
        for values, fmt in ((data.features, "f"), (data.labels, "q")):
            flat = values.flatten().tolist()
            sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def decoded_examples(data: LabelledSet, count: int = 3) -> list[dict[str, Any]]:
    examples = []
    for i in range(min(count, len(data))):
        label = int(data.labels[i])
        examples.append(
            {
                "features_first4": [round(v, 3) for v in data.features[i, :4].tolist()],
                "label": label,
                "teacher_p_label": round(float(data.teacher_probs[i, label]), 3),
            }
        )
    return examples
