"""A masked mean over padded rows, written twice: vectorised, and as a plain loop to check it by.

Each row of `values` holds one number per position (say, a per-token loss); only the first
`lengths[row]` positions are real, the rest is padding whose values are whatever was computed
there. The mean of a row must use its real positions only.
"""

from __future__ import annotations

import torch

from drills.catalog.gradient_check.variants import MASKED_MEANS


def padded_rows(
    generator: torch.Generator, rows: int = 8, length: int = 12
) -> tuple[torch.Tensor, torch.Tensor]:
    """(values (rows, length) float64, lengths (rows,)): two full rows, the rest padded."""
    values = torch.rand(rows, length, generator=generator, dtype=torch.float64) * 3.0
    lengths = torch.randint(2, length, (rows,), generator=generator)
    full = torch.randperm(rows, generator=generator)[:2]
    lengths[full] = length
    return values, lengths


def masked_mean_vectorised(
    values: torch.Tensor, lengths: torch.Tensor, variant: str
) -> torch.Tensor:
    """Per-row mean over the real positions, for the whole batch at once."""
    if variant not in MASKED_MEANS:
        raise ValueError(f"unknown masked mean {variant!r}")
    mask = torch.arange(values.shape[1])[None, :] < lengths[:, None]
    if variant == "padded-length":
        return (values * mask).mean(dim=1)  # the mask zeroes padding, but .mean counts it
    if variant == "padding-summed":
        return values.sum(dim=1) / mask.sum(dim=1)  # the right count, the mask forgotten above
    return (values * mask).sum(dim=1) / mask.sum(dim=1)


def masked_mean_loop(values: torch.Tensor, lengths: torch.Tensor) -> list[float]:
    """The same, one row and one position at a time: slow, and too plain to get wrong."""
    means = []
    for row, length in zip(values.tolist(), lengths.tolist(), strict=True):
        total = 0.0
        for t in range(length):
            total += row[t]
        means.append(total / length)
    return means
