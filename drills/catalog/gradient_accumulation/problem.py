"""The problem "Gradient accumulation" trains on: least squares, small enough for closed forms.

A linear model fits y = x·w* + noise. Its loss, the mean squared error, has a Hessian that does
not depend on the weights, 2/n · X̃ᵀX̃ (X̃: the inputs with a column of ones for the bias). So
the rate at which full-batch gradient descent stops converging, 2 / the Hessian's largest
eigenvalue, is known before the run, and so is the lowest loss any weights reach on the set.
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
    targets: torch.Tensor  # (n, 1) float32: x·w* plus noise

    def __len__(self) -> int:
        return len(self.targets)


def make_problem(
    examples: int, features: int, noise: float, generator: torch.Generator
) -> Regression:
    x = torch.randn(examples, features, generator=generator)
    true_weights = torch.randn(features, 1, generator=generator) / math.sqrt(features)
    y = x @ true_weights + noise * torch.randn(examples, 1, generator=generator)
    return Regression(features=x, targets=y)


def design_matrix(x: torch.Tensor) -> torch.Tensor:
    """The inputs with a column of ones (the bias), in float64."""
    return torch.cat([x.double(), torch.ones(len(x), 1, dtype=torch.float64)], dim=1)


def stability_limit(data: Regression) -> float:
    """2 / the largest eigenvalue of the mean squared error's Hessian, 2/n · X̃ᵀX̃."""
    design = design_matrix(data.features)
    hessian = 2.0 * design.T @ design / len(data)
    return 2.0 / float(torch.linalg.eigvalsh(hessian)[-1])


def best_loss(data: Regression) -> float:
    """The least-squares minimum: the lowest training loss any weights and bias reach."""
    design = design_matrix(data.features)
    solution = torch.linalg.lstsq(design, data.targets.double()).solution
    return float((design @ solution - data.targets.double()).pow(2).mean())


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
