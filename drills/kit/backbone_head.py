"""The small backbone + head classifier and its data, shared by the drills that inspect which
parameters learn (break-the-graph, optimizer-membership)."""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import torch
from torch import nn


@dataclass(frozen=True)
class BackboneHeadConfig:
    examples: int = 64  # one fixed batch, trained on full-batch
    features: int = 16
    wide: int = 64  # width of the backbone's first layer
    hidden: int = 32  # width of the features the head reads
    classes: int = 4
    lr: float = 1e-2  # Adam
    steps: int = 200
    teacher: int = 32  # hidden width of the teacher that labels the data (not the model's)

    @classmethod
    def sized(cls, knobs: Mapping[str, Any], **fields: Any) -> Self:
        """A config from the drill's size knobs: `width` is the features the head reads (the
        backbone's first layer is twice as wide), `steps` the full-batch steps. The data never
        depends on them: the same batch whatever the model's size or the run's length."""
        width = int(knobs.get("width", cls.hidden))
        return cls(wide=2 * width, hidden=width, steps=int(knobs.get("steps", cls.steps)), **fields)


@dataclass(frozen=True)
class Data:
    features: torch.Tensor  # (examples, features) float32
    labels: torch.Tensor  # (examples,) int64


def make_data(config: BackboneHeadConfig, generator: torch.Generator) -> Data:
    """Labels from a fixed random two-layer teacher: learnable, but not by a linear model alone.

    Drawn from the run's data generator, so every knob setting sees the same batch.
    """
    features = torch.randn(config.examples, config.features, generator=generator)
    first = torch.randn(config.features, config.teacher, generator=generator)
    second = torch.randn(config.teacher, config.classes, generator=generator)
    labels = (torch.tanh(features @ first) @ second).argmax(dim=-1)
    return Data(features, labels)


class BackboneAndHead(nn.Module):
    def __init__(self, config: BackboneHeadConfig) -> None:
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(config.features, config.wide),
            nn.ReLU(),
            nn.Linear(config.wide, config.hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(config.hidden, config.classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(features))  # type: ignore[no-any-return]


def data_digest(data: Data) -> str:
    sha = hashlib.sha256()
    for values, fmt in ((data.features, "f"), (data.labels, "q")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_inputs(data: Data, classes: int) -> dict[str, Any]:
    return {
        "shapes": {"features": list(data.features.shape), "labels": list(data.labels.shape)},
        "sha256": data_digest(data),
        "label_counts": torch.bincount(data.labels, minlength=classes).tolist(),
        "examples": [
            {
                "features_first4": [round(v, 3) for v in data.features[i, :4].tolist()],
                "label": int(data.labels[i]),
            }
            for i in range(3)
        ],
    }


def snapshot(model: nn.Module, part: str) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.get_submodule(part).parameters()]


def step_size(model: nn.Module, part: str, before: list[torch.Tensor]) -> float:
    """How far one optimizer step moved a part: the L2 norm of its weight change."""
    now = model.get_submodule(part).parameters()
    return math.sqrt(
        sum(float((p.detach() - b).pow(2).sum()) for p, b in zip(now, before, strict=True))
    )
