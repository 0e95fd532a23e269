"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). Each hidden run is one padded batch of per-token losses with
its mask (True at a real token), drawn to stress one corner, and one version of the masked
means planted for the learner's compare() to judge: two correct, five wrong in one way each.

The definitions (the starter's docstring says the same): per_sequence[b] is the mean of row b's
real losses, 0 for a row with no real token; overall is the mean over every real token of the
batch (each token weighs the same), 0 when the batch has none. What padding holds is never read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

Means = tuple[torch.Tensor, torch.Tensor]  # (per_sequence [B], overall [])
Version = Callable[[torch.Tensor, torch.Tensor], Means]

# What each hidden batch stresses, in the order of the exercise's cases.
KINDS = ("ordinary", "empty-rows", "one-sequence", "length-one", "large-float64", "garbage", "none")
GARBAGE = KINDS.index("garbage")  # the run whose padding holds inf and NaN (and, again, zeros)


@dataclass(frozen=True)
class Batch:
    losses: torch.Tensor  # [B, T] float32 or float64, finite and >= 0 at real tokens
    mask: torch.Tensor  # [B, T] bool, True at a real token
    garbage: torch.Tensor | None  # the same losses with inf and NaN in the padding


def build(case: int, seed: int) -> Batch:
    generator = torch.Generator().manual_seed(seed)

    def draw(low: int, high: int) -> int:
        return int(torch.randint(low, high + 1, (1,), generator=generator))

    kind = KINDS[case]
    rows, width = draw(3, 8), draw(4, 24)
    rows = 1 if kind == "one-sequence" else rows
    width = 1 if kind == "length-one" else width
    dtype = torch.float64 if kind in ("one-sequence", "large-float64") else torch.float32
    scale = 1e5 if kind == "large-float64" else 6.0
    losses = torch.rand(rows, width, generator=generator, dtype=torch.float64) * scale
    if kind in ("empty-rows", "length-one"):  # scattered real tokens, as a prompt mask leaves
        mask = torch.rand(rows, width, generator=generator) < 0.6
        order = torch.randperm(rows, generator=generator)
        mask[order[: draw(1, min(3, rows - 1))]] = False
        mask[order[-1], 0] = True  # and at least one row with a real token
    else:  # right-padded rows of different lengths, none empty
        lengths = torch.randint(1, width + 1, (rows,), generator=generator)
        lengths[int(torch.randint(rows, (1,), generator=generator))] = max(1, width - 1)
        mask = torch.arange(width) < lengths[:, None]
    if kind == "none":
        mask[:] = False
    garbage = None
    if kind == "garbage":
        junk = torch.full((rows, width), float("nan"), dtype=torch.float64)
        junk[torch.rand(rows, width, generator=generator) < 0.5] = float("inf")
        garbage = torch.where(mask, losses, junk).to(dtype)
        losses = torch.where(mask, losses, 0.0)
    else:  # padding that holds numbers, as an unmasked loss would leave there
        losses = torch.where(mask, losses, torch.rand(rows, width, generator=generator) * 20)
    return Batch(losses.to(dtype), mask, garbage)


# -- correct versions ----------------------------------------------------------------------------


def reference(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    """The definitions in float64, whatever the input's dtype: the judge's truth."""
    kept = torch.where(mask, losses.double(), 0.0)
    counts = mask.sum(dim=1)
    sums = kept.sum(dim=1)
    per_sequence = torch.where(counts > 0, sums / counts.clamp(min=1), 0.0)
    total = int(counts.sum())
    return per_sequence, sums.sum() / total if total else torch.zeros((), dtype=torch.float64)


def fair(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    """A correct vectorised version in the input's dtype."""
    kept = losses.masked_fill(~mask, 0.0)
    counts = mask.sum(dim=1).to(losses.dtype)
    per_sequence = kept.sum(dim=1) / counts.clamp(min=1.0)
    return per_sequence, kept.sum() / counts.sum().clamp(min=1.0)


def by_rows(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    """A correct plain loop: Python floats (fast, and exact to float64), in the input's dtype."""
    sums, counts = [], []
    for row, keep in zip(losses.tolist(), mask.tolist(), strict=True):
        real = [value for value, kept in zip(row, keep, strict=True) if kept]
        sums.append(sum(real))
        counts.append(len(real))
    per_sequence = [s / n if n else 0.0 for s, n in zip(sums, counts, strict=True)]
    overall = sum(sums) / sum(counts) if sum(counts) else 0.0
    return torch.tensor(per_sequence, dtype=losses.dtype), torch.tensor(overall, dtype=losses.dtype)


def in_float64(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    per_sequence, overall = reference(losses, mask)
    return per_sequence.to(losses.dtype), overall.to(losses.dtype)


# -- wrong versions, each in one way -------------------------------------------------------------


def padded_length(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    kept = losses.masked_fill(~mask, 0.0)
    return kept.sum(dim=1) / losses.shape[1], kept.sum() / losses.numel()


def nan_when_empty(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    kept = losses.masked_fill(~mask, 0.0)
    counts = mask.sum(dim=1).to(losses.dtype)
    return kept.sum(dim=1) / counts, kept.sum() / counts.sum()


def mean_of_means(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    per_sequence, _ = fair(losses, mask)
    return per_sequence, per_sequence.mean()


def times_mask(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    kept = losses * mask
    counts = mask.sum(dim=1).to(losses.dtype)
    return kept.sum(dim=1) / counts.clamp(min=1.0), kept.sum() / counts.sum().clamp(min=1.0)


def squeezed(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    per_sequence, overall = fair(losses, mask)
    return per_sequence.squeeze(), overall


@dataclass(frozen=True)
class Planted:
    version: Version
    right: bool
    what: str  # "a version that ...", in the learner's terms
    shows: str  # for a wrong one: what kind of input tells it apart


# The version each hidden run hands the learner's compare(), in the order of the cases.
PLANTED = (
    Planted(fair, True, "a correct vectorised version", ""),
    Planted(
        padded_length,
        False,
        "a version that divides each row's sum by the padded length",
        "any row with padding shows it",
    ),
    Planted(
        nan_when_empty,
        False,
        "a version that gives NaN for a row with no real token",
        "a row whose mask is all False shows it",
    ),
    Planted(
        mean_of_means,
        False,
        "a version whose overall mean is the average of the rows' means",
        "rows with different numbers of real tokens show it",
    ),
    Planted(
        times_mask,
        False,
        "a version that lets inf or NaN in the padding reach its result",
        "padding that holds inf or NaN shows it",
    ),
    Planted(in_float64, True, "a correct version that sums in float64 and rounds back", ""),
    Planted(
        squeezed,
        False,
        "a version whose per-sequence result has the wrong shape for a batch of one",
        "a batch of one row shows it (compare shapes, not only values)",
    ),
)


def valid_input(losses: object, mask: object) -> bool:
    """(losses, mask) as documented: a 2-D float32 or float64 tensor and a bool mask like it."""
    return (
        isinstance(losses, torch.Tensor)
        and isinstance(mask, torch.Tensor)
        and losses.dtype in (torch.float32, torch.float64)
        and losses.dim() == 2
        and mask.dtype == torch.bool
        and mask.shape == losses.shape
    )


def differs(losses: torch.Tensor, mask: torch.Tensor, version: Version) -> bool:
    """Whether `version` disagrees with a correct version of the same dtype on this input:
    another shape or dtype, a value beyond rounding, or NaN where the other has a number."""
    got, right = version(losses, mask), fair(losses, mask)
    for mine, theirs in zip(got, right, strict=True):
        if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            return True
        if not torch.allclose(mine, theirs, rtol=1e-4, atol=1e-5, equal_nan=True):
            return True
    return False
