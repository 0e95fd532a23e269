"""Plain-Python readings of a run's per-batch series (torch-free): the correlation with the
token count, the logged loss per token of its batch, and the last epoch's highest point."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r; None when either side does not vary (no line to correlate with)."""
    if len(xs) < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    # A spread many orders below the values is rounding, not variation.
    if sxx <= 1e-18 * max(mx * mx, 1.0) * len(xs) or syy <= 1e-18 * max(my * my, 1.0) * len(ys):
        return None
    return sxy / math.sqrt(sxx * syy)


@dataclass(frozen=True)
class Spike:
    ratio: float  # its logged loss / the epoch's median logged loss
    index: int  # position in the epoch's lists
    tokens: int
    is_longest: bool
    per_token_ratio: float  # its per-token mean / the epoch's median per-token mean


def highest_point(logged: list[float], per_token: list[float], tokens: list[int]) -> Spike | None:
    """The batch with the highest logged loss in one epoch, read against the epoch's medians."""
    if not logged:
        return None
    index = max(range(len(logged)), key=logged.__getitem__)
    median, median_per_token = statistics.median(logged), statistics.median(per_token)
    if median <= 0 or median_per_token <= 0:
        return None
    return Spike(
        ratio=logged[index] / median,
        index=index,
        tokens=tokens[index],
        is_longest=tokens[index] == max(tokens),
        per_token_ratio=per_token[index] / median_per_token,
    )


def relation_gap(tokens: list[int], means: list[float]) -> float:
    """The closed form of (mean of batch means) - (per-token mean) for batches holding `tokens`
    tokens with per-token means `means`: -Cov(T, m) / mean(T), population covariance. Batches
    that hold more tokens than average and have a lower mean pull the per-token mean down."""
    mean_tokens, mean_means = statistics.fmean(tokens), statistics.fmean(means)
    covariance = statistics.fmean(
        (t - mean_tokens) * (m - mean_means) for t, m in zip(tokens, means, strict=True)
    )
    return -covariance / mean_tokens
