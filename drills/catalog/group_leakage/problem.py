"""The data "Group and near-copy leakage" trains on: reviews written by users, with known floors.

Each row is one review: 4 "content" features that carry the general rule, and 16 "style"
features, the user's own fingerprint (the same point for all their reviews, plus a little
jitter), so a model can tell who wrote a review. The target is standardised to variance 1 and
made of three independent parts: the general rule (1 - user_share - noise of the variance), the
user's own offset (user_share: each user rates +a or -a, a = sqrt(user_share)) and noise. The
offset can be learnt for users the model has seen, never for a new one, so two floors are known
before the run: no model can beat user_share + noise on the rows of users it never saw, nor the
noise alone on rows of users it knows.

Near copies are reviews posted again under another account with their text barely changed: the
same target, the features moved by a tiny perturbation, so no exact match finds them.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass

import torch

CONTENT = 4  # features that carry the general rule
STYLE = 16  # features that fingerprint the user
STYLE_JITTER = 0.1  # how far one review's style strays from its user's fingerprint


@dataclass(frozen=True)
class Rows:
    features: torch.Tensor  # (n, CONTENT + STYLE) float32
    targets: torch.Tensor  # (n,) float32, variance 1 over the population
    users: torch.Tensor  # (n,) int64: who wrote it (a near copy has an account of its own)

    def __len__(self) -> int:
        return len(self.targets)

    def take(self, index: torch.Tensor) -> Rows:
        return Rows(self.features[index], self.targets[index], self.users[index])


@dataclass(frozen=True)
class Population:
    """The fixed parts of the problem: the general rule and the variance shares."""

    rule: torch.Tensor  # (CONTENT,) unit norm, so the rule's part has variance 1 before scaling
    user_share: float  # share of the target's variance that is the user's own offset
    noise: float  # share that is noise no model can predict

    @property
    def rule_scale(self) -> float:
        return math.sqrt(1.0 - self.user_share - self.noise)


def make_population(user_share: float, noise: float, generator: torch.Generator) -> Population:
    rule = torch.randn(CONTENT, generator=generator)
    return Population(rule / rule.norm(), user_share, noise)


@dataclass(frozen=True)
class Users:
    fingerprints: torch.Tensor  # (u, STYLE)
    signs: torch.Tensor  # (u,) +1 or -1: whether the user rates above or below the rule
    first_id: int  # ids first_id .. first_id + u - 1


def make_users(count: int, first_id: int, generator: torch.Generator) -> Users:
    fingerprints = torch.randn(count, STYLE, generator=generator)
    # All on one sphere (per-feature variance about 1): no user sits far out, where an MLP's
    # guess for an unknown user would run away and one user would swing a whole set's loss.
    fingerprints = fingerprints / fingerprints.norm(dim=1, keepdim=True) * STYLE**0.5
    # +a or -a, never a spread: every user's offset has the same size, so the variance of a
    # sample of users is exactly user_share and a few users do not swing the floors.
    signs = torch.randint(0, 2, (count,), generator=generator).float() * 2.0 - 1.0
    return Users(fingerprints, signs, first_id)


def write_reviews(
    population: Population, users: Users, per_user: int, generator: torch.Generator
) -> Rows:
    """`per_user` reviews from each user, user after user."""
    who = torch.arange(len(users.signs)).repeat_interleave(per_user)
    content = torch.randn(len(who), CONTENT, generator=generator)
    style = users.fingerprints[who] + STYLE_JITTER * torch.randn(
        len(who), STYLE, generator=generator
    )
    targets = (
        population.rule_scale * content @ population.rule
        + math.sqrt(population.user_share) * users.signs[who]
        + math.sqrt(population.noise) * torch.randn(len(who), generator=generator)
    )
    return Rows(torch.cat([content, style], dim=1), targets, who + users.first_id)


def near_copies(source: Rows, index: torch.Tensor, moves: torch.Tensor, first_id: int) -> Rows:
    """Copies of `source`'s rows at `index`, each feature moved by `moves` (same shape as the
    copies' features), the target unchanged, every copy under a new account of its own."""
    return Rows(
        source.features[index] + moves,
        source.targets[index].clone(),
        torch.arange(first_id, first_id + len(index)),
    )


def concat(first: Rows, second: Rows) -> Rows:
    return Rows(
        torch.cat([first.features, second.features]),
        torch.cat([first.targets, second.targets]),
        torch.cat([first.users, second.users]),
    )


def split_indices(
    rows: Rows, validation: int, by_user: bool, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(validation, training) row indices. By user: whole users go to one side, drawn in a
    random order until the validation set is full (each user's rows are consecutive and every
    user writes the same number, so it fills exactly)."""
    if not by_user:
        order = torch.randperm(len(rows), generator=generator)
    else:
        per_user = len(rows) // len(torch.unique(rows.users))
        user_order = torch.randperm(len(rows) // per_user, generator=generator)
        order = (user_order[:, None] * per_user + torch.arange(per_user)).flatten()
    return order[:validation], order[validation:]


def rows_digest(*sets: Rows) -> str:
    sha = hashlib.sha256()
    for rows in sets:
        for values, fmt in ((rows.features, "f"), (rows.targets, "f"), (rows.users, "q")):
            flat = values.flatten().tolist()
            sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()
