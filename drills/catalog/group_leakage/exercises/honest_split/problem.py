"""The hidden reviews of the honest-split exercise, rebuilt from a seed: trusted code for both the
harness (inside the sandbox) and the checks (outside). The reviews are the drill's own
(drills/catalog/group_leakage/problem.py): each user writes a few, and a tenth more are near
copies of them posted under accounts of their own, all in a shuffled order."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from drills.catalog.group_leakage.problem import (
    CONTENT,
    STYLE,
    Rows,
    concat,
    make_population,
    make_users,
    near_copies,
    write_reviews,
)
from drills.catalog.group_leakage.train import COPY_ACCOUNTS, LeakageConfig

CONFIG = LeakageConfig()  # user share 0.4, noise 0.06, 1,024 reviews, the drill's MLP
ROWS_PER_USER = (2, 4, 1)  # per hidden run: 1 leaves only the copies to find
COPY_SHARE = 0.1  # near copies, as a share of the 1,024 original reviews
PERTURBATION = 1e-3  # the drill's default move of each feature of a copy
TRAINED_AT = 1  # the hidden run a model is trained on (4 reviews per user)


@dataclass(frozen=True)
class Problem:
    reviews: Rows  # what split() is given (features and users), in a shuffled order
    fresh: Rows  # one more review of each original user: scored as known-user rows
    unseen: Rows  # reviews by users nowhere in `reviews`


def build(case: int, seed: int) -> Problem:
    k = ROWS_PER_USER[case]
    generator = torch.Generator().manual_seed(seed)
    population = make_population(CONFIG.user_share, CONFIG.noise, generator)
    users = make_users(CONFIG.pool // k, 0, generator)
    original = write_reviews(population, users, k, generator)
    fresh = write_reviews(population, users, 1, generator)
    unseen = write_reviews(
        population, make_users(CONFIG.unseen_rows // k, CONFIG.pool // k, generator), k, generator
    )
    count = round(COPY_SHARE * CONFIG.pool)
    sources = torch.randint(0, len(original), (count,), generator=generator)
    moves = PERTURBATION * torch.randn(count, CONTENT + STYLE, generator=generator)
    reviews = concat(original, near_copies(original, sources, moves, COPY_ACCOUNTS))
    order = torch.randperm(len(reviews), generator=generator)
    return Problem(reviews.take(order), fresh, unseen)
