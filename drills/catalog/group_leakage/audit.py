"""The three audits of a split, and the chance spread of a loss over rows that come in users.

An exact-match audit (`exact_matches`, in the kit: val-below-train and overfitting-leakage count
with it too) looks for validation rows whose features occur, bit for bit, in training.
A user audit looks for validation rows whose user also wrote training rows. A near-copy audit
looks for validation rows with a training row closer than a small distance: the feature
rounding or text normalisation a real audit would do, done as a distance so that a copy that
straddles a rounding boundary is not missed.
"""

from __future__ import annotations

import math

import torch

# A near copy sits at most 0.02 x sqrt(20) = 0.09 from its source at the largest perturbation
# the drill allows (most much closer). Two different reviews of one user differ in their 4
# content features by a distance with mean about 2.8; one closer than 0.2 has a chance near
# 5e-5 per pair (chi-squared with 4 degrees of freedom below 0.02), about 0.04 false finds in a
# run of the default size. So a row closer than this is a copy, and a copy is closer than this.
NEAR_COPY_DISTANCE = 0.2


def shared_users(train_users: torch.Tensor, validation_users: torch.Tensor) -> torch.Tensor:
    """A mask over validation rows: the row's user also has rows in training."""
    return torch.isin(validation_users, train_users)


def nearest_distances(train: torch.Tensor, validation: torch.Tensor) -> torch.Tensor:
    """Each validation row's distance to its nearest training row (float64: exact zeros stay)."""
    return torch.cdist(validation.double(), train.double()).min(dim=1).values


def near_copies_of(train: torch.Tensor, validation: torch.Tensor) -> torch.Tensor:
    """A mask over validation rows: some training row lies within NEAR_COPY_DISTANCE."""
    return nearest_distances(train, validation) < NEAR_COPY_DISTANCE


def clustered_variance(losses: torch.Tensor, users: torch.Tensor) -> float:
    """The variance of the mean of `losses` when rows of one user are not independent: the
    squared sums of each user's deviations from the mean, over n squared (a cluster-robust
    variance). With one row per user it is the plain variance of the mean, up to n / (n - 1)."""
    losses = losses.double()
    deviations = losses - losses.mean()
    _, cluster = torch.unique(users, return_inverse=True)
    sums = torch.zeros(int(cluster.max()) + 1, dtype=torch.float64).index_add_(
        0, cluster, deviations
    )
    return float(sums.pow(2).sum()) / len(losses) ** 2


def difference_noise(
    first: torch.Tensor, first_users: torch.Tensor, second: torch.Tensor, second_users: torch.Tensor
) -> float:
    """Standard error of the difference of two sets' mean losses, were both honest samples of
    new users (1 s.e.): how far they may differ by chance."""
    return math.sqrt(
        clustered_variance(first, first_users) + clustered_variance(second, second_users)
    )
