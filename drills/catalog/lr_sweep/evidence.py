"""What the learning-rate sweep shows besides its curves: what each rate did, the per-rate
table and the inputs."""

from __future__ import annotations

import hashlib
import statistics
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from drills.catalog.lr_sweep.problem import SweepConfig
from drills.catalog.lr_sweep.verdicts import rate_verdict
from drills.kit.tables import Cell, table


@dataclass
class RateRun:
    """Everything one rate's run produced (its curves are also in the Run, named by the rate)."""

    lr: float
    losses: list[float]  # one per step taken
    grad_norms: list[float]
    update_norms: list[float]  # finite steps only: an overflowing step shows up as the next loss
    update_ratios: list[float]  # step size / weight size
    final_loss: float  # mean of the last 10% of the finite losses
    max_loss: float
    nonfinite_step: int | None  # where it overflowed and stopped
    audit_rows: list[dict[str, Any]]
    gradless_steps: int = 0  # steps at which the optimizer found no gradient on any weight
    holds_the_model: bool = True  # whether the optimizer steps any of the model's own weights


def rates_table(sweep: Sequence[RateRun], initial_loss: float) -> dict[str, Any]:
    rows: list[list[Cell]] = []
    for rate in sweep:
        rows.append(
            [
                rate.lr,
                rate_verdict(initial_loss, rate.final_loss, rate.max_loss, rate.nonfinite_step),
                rate.final_loss,
                (initial_loss - rate.final_loss) / initial_loss,
                rate.max_loss,
                rate.nonfinite_step,
                statistics.median(rate.grad_norms),
                statistics.median(rate.update_norms) if rate.update_norms else None,
                statistics.median(rate.update_ratios) if rate.update_ratios else None,
            ]
        )
    return table(
        "rates",
        "One row per learning rate",
        (
            "learning rate",
            "the loss",
            "final loss",
            "relative drop",
            "highest loss",
            "non-finite at step",
            "median gradient norm",
            "median step size",
            "median step / weights",
        ),
        rows,
        note=(
            f"Every rate started from the same weights at loss {initial_loss:.4g}. 'flat': "
            "fell by less than 10%; 'spikes': rose above 1.5x the starting loss or ended "
            "higher; 'non-finite': overflowed, the run stopped there."
        ),
    )


def tensor_digest(*tensors: torch.Tensor) -> str:
    sha = hashlib.sha256()
    for tensor in tensors:
        flat = tensor.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}f", *flat))
    return sha.hexdigest()


def describe_inputs(x: torch.Tensor, y: torch.Tensor, config: SweepConfig) -> dict[str, Any]:
    return {
        "shapes": {"inputs": list(x.shape), "targets": list(y.shape)},
        "sha256": tensor_digest(x, y),
        "examples": [
            {
                "features_first4": [round(v, 3) for v in x[i, :4].tolist()],
                "target": round(float(y[i]), 3),
            }
            for i in range(3)
        ],
        "note": (
            f"targets = 2 tanh(x . w) + noise (std {config.noise}) for a hidden random w; the "
            f"whole set of {config.examples} examples is the batch of every step"
        ),
    }
