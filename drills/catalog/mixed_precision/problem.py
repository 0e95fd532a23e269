"""The problem "Mixed precision" trains on: a small regression a tiny MLP fits in a few dozen
steps of plain SGD.

The targets are a smooth function of the inputs, y = tanh(2·x·w*) + noise, so a model with one
hidden layer of tanh units fits them well and the gradients stay of order one: small enough for
float16, large enough that a big loss scale pushes them past its largest number, 65504.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Regression:
    features: torch.Tensor  # (n, d) float32, standard normal
    targets: torch.Tensor  # (n, 1) float32: tanh(2·x·w*) plus noise

    def __len__(self) -> int:
        return len(self.targets)


def make_problem(
    examples: int, features: int, noise: float, generator: torch.Generator
) -> Regression:
    x = torch.randn(examples, features, generator=generator)
    direction = torch.randn(features, 1, generator=generator) / math.sqrt(features)
    y = torch.tanh(2.0 * x @ direction) + noise * torch.randn(examples, 1, generator=generator)
    return Regression(features=x, targets=y)


def regression_digest(data: Regression) -> str:
    sha = hashlib.sha256()
    for values in (data.features, data.targets):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}f", *flat))
    return sha.hexdigest()


def decoded_examples(data: Regression, count: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "features_first4": [round(v, 3) for v in data.features[i, :4].tolist()],
            "target": round(float(data.targets[i, 0]), 3),
        }
        for i in range(min(count, len(data)))
    ]
