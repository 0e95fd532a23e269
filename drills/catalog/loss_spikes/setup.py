"""The pieces "Loss spikes" trains with: config, the batches (one of them corrupt), the model."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


@dataclass(frozen=True)
class SpikesConfig:
    # "on": one batch of the fixed order has every label wrong in the stored data; "loader":
    # the stored labels are right and the loader gets that batch's labels wrong; "off": neither.
    bad_batch: str = "on"
    clip: float = 0.0  # max gradient norm; 0 = no clipping
    lr: float = 0.5  # the configured rate of plain gradient descent, no momentum
    hardcoded_lr: float = 0.0  # a rate typed into the loop's optimizer; 0 = it takes `lr`
    classes: int = 4
    spread: float = 4.0  # distance of each class centre from the origin (noise has std 1)
    features: int = 16
    hidden: int = 64
    batch_size: int = 16
    batches: int = 10  # per epoch, always in the same order
    epochs: int = 8
    bad_position: int = 6  # where in the epoch the corrupt batch sits
    # The spike finder: a step spikes when its loss is over `spike_ratio` times the median of
    # the `window` steps before it, and higher by at least `spike_rise` nats (late in training
    # the normal loss is tiny, and 3x a tiny number is still noise).
    window: int = 5
    spike_ratio: float = 3.0
    spike_rise: float = 0.5

    @property
    def steps(self) -> int:
        return self.batches * self.epochs

    @property
    def rate(self) -> float:
        """The rate the optimizer steps with: a number typed into the loop wins over the
        configured one, which then never reaches the optimizer."""
        return self.hardcoded_lr if self.hardcoded_lr > 0 else self.lr


@dataclass(frozen=True)
class Dataset:
    inputs: torch.Tensor  # (batches, batch_size, features)
    labels: torch.Tensor  # (batches, batch_size): what the loader yields and training sees
    true_labels: torch.Tensor  # (batches, batch_size): the correct labels
    stored_labels: torch.Tensor  # (batches, batch_size): the labels as the data file holds them


def make_dataset(config: SpikesConfig, generator: torch.Generator) -> Dataset:
    """Points around one random centre per class, split into batches; drawn from the run's data
    generator, so the corrupt batch is the only difference between bad_batch on and off, and
    "on" and "loader" train on the very same batches (only the stored file differs)."""
    count = config.batches * config.batch_size
    # Class centres in random but orthogonal directions, all `spread` from the origin: every pair
    # sits equally far apart, so seeds differ in the draw, not in how hard the problem is (with
    # fully random centres one seed put two classes twice as close as another).
    directions, _ = torch.linalg.qr(
        torch.randn(config.features, config.classes, generator=generator)
    )
    centres = config.spread * directions.T
    labels = (torch.arange(count) % config.classes)[torch.randperm(count, generator=generator)]
    inputs = centres[labels] + torch.randn(count, config.features, generator=generator)
    true_labels = labels.view(config.batches, config.batch_size)
    stored = true_labels.clone()
    if config.bad_batch == "on":
        # Every label of one batch moved to the next class: all wrong, none obviously invalid.
        stored[config.bad_position] = (stored[config.bad_position] + 1) % config.classes
    seen = stored.clone()
    if config.bad_batch == "loader":
        # The file is right, but the loader maps the class ids of the shard that batch comes
        # from through a table one place off: the same wrong labels, made on the way in.
        seen[config.bad_position] = (seen[config.bad_position] + 1) % config.classes
    return Dataset(inputs.view(config.batches, config.batch_size, -1), seen, true_labels, stored)


class MLP(nn.Module):
    def __init__(self, config: SpikesConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]


def dataset_digest(data: Dataset) -> str:
    sha = hashlib.sha256()
    # The stored labels are left out: the digest is of what training reads.
    for values, fmt in ((data.inputs, "f"), (data.labels, "q"), (data.true_labels, "q")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_inputs(data: Dataset, config: SpikesConfig, position: int | None) -> dict[str, Any]:
    examples = []
    if position is not None:
        # The raw examples of the batch the replay suspected: look at them before anything else.
        for i in range(4):
            examples.append(
                {
                    "batch_position": position,
                    "features_first4": [round(v, 3) for v in data.inputs[position, i, :4].tolist()],
                    "label_in_training": int(data.labels[position, i]),
                    "correct_label": int(data.true_labels[position, i]),
                }
            )
    return {
        "shapes": {
            "inputs": list(data.inputs.shape),
            "labels": list(data.labels.shape),
        },
        "sha256": dataset_digest(data),
        "examples": examples,
        "wrong_labels_per_batch": (data.labels != data.true_labels).sum(dim=1).tolist(),
        "labels_the_loader_changed_per_batch": (data.labels != data.stored_labels)
        .sum(dim=1)
        .tolist(),
        "note": (
            f"{config.epochs} epochs of the same {config.batches} batches in the same order; "
            "the examples are from the batch the replay suspected"
        ),
    }
