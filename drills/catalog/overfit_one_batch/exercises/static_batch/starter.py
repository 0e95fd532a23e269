"""Overfit one batch. Write batch_is_static() and seeded_overfit().

batch_is_static(loader): the judge hands you a single-batch loader (every pass over it yields
one batch, a tuple of tensors). Return True when two passes give the same batch, bit for bit,
and False otherwise.

seeded_overfit(make_model, loader, seed, steps): make one short overfit run repeatable. Seed
every source of randomness the run draws from with `seed`, build the model with make_model(),
take ONE batch (features, labels) from the loader, and train the model on it in training mode
for `steps` steps (Adam at lr 1e-2, cross-entropy, one forward per step). Return the model.
The judge calls it twice with the same seed and compares everything it records, bit for bit.

    make_model  builds a fresh small classifier (it has dropout) each time it is called
    loader      yields (features, labels); it may draw from torch's and Python's random
"""

import random
from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F
from torch import nn


def batch_is_static(loader: Iterable[tuple[torch.Tensor, ...]]) -> bool:
    raise NotImplementedError("write batch_is_static()")


def seeded_overfit(
    make_model: Callable[[], nn.Module],
    loader: Iterable[tuple[torch.Tensor, torch.Tensor]],
    seed: int,
    steps: int,
) -> nn.Module:
    raise NotImplementedError("write seeded_overfit()")


if __name__ == "__main__":
    # A local try (the judge ignores this block and builds its own loaders and models).
    random.seed(0)
    batch = (torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))
    print("a list of one batch is static:", batch_is_static([batch]))
    net = seeded_overfit(lambda: nn.Linear(3, 2), [batch], seed=0, steps=5)
    print("loss after 5 steps:", F.cross_entropy(net(batch[0]), batch[1]).item())
