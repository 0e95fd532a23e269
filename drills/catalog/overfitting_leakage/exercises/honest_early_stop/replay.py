"""The judge's own training of a hidden run, outside the sandbox: the loop as handed out (the
drill's AdamW at 1.5e-3 in batches of 32) on the fresh rows of the training table only, for the
starter's 40 epochs, scored on the clean held-out set after every one. Its best epoch is the
checkpoint the learner's kept weights are compared with. Made once per hidden run: every file
judged on that run is compared with the same replay.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.overfitting_leakage.exercises.honest_early_stop.problem import (
    CONFIG,
    EPOCHS,
    Problem,
    build,
    fresh_model,
)
from drills.kit.synthetic_classification import build_mlp


@dataclass(frozen=True)
class Best:
    epoch: int  # 1-based: the epoch after which the clean loss was lowest
    clean_loss: float  # on the clean held-out set
    train_loss: float  # on the fresh rows it trained on


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: on a busy machine torch's worker threads spin for small
    matrices and multiply the judge's CPU time many times over (measured: 30 s against 1 s)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def model_with(weights: dict[str, torch.Tensor]) -> nn.Sequential:
    model = build_mlp(CONFIG.task, CONFIG.hidden, dropout=0.0)
    model.load_state_dict(weights)
    return model.eval()


@torch.no_grad()
def loss_of(model: nn.Module, features: torch.Tensor, labels: torch.Tensor) -> float:
    was_training = model.training
    model.eval()
    try:
        return float(F.cross_entropy(model(features), labels))
    finally:
        model.train(was_training)


@functools.lru_cache(maxsize=16)
def best_checkpoint(case: int, seed: int) -> Best:
    """The honest loop's best epoch on the clean set, trained here from the run's initial weights
    in a batch order of the judge's own (the learner's order differs: a right fix lands within
    the checks' band of it, measured over seeds 0-4)."""
    with one_thread():
        return replay(build(case, seed), seed)


def replay(problem: Problem, seed: int) -> Best:
    features, labels = problem.train_x[problem.fresh], problem.train_y[problem.fresh]
    model = fresh_model(problem)
    optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG.lr, weight_decay=0.0)
    order = torch.Generator().manual_seed(seed + 1)
    best = Best(0, float("inf"), float("inf"))
    for epoch in range(1, EPOCHS + 1):
        model.train()
        shuffled = torch.randperm(len(labels), generator=order)
        for rows in shuffled.split(CONFIG.batch_size):  # type: ignore[no-untyped-call]
            loss = F.cross_entropy(model(features[rows]), labels[rows])
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
        clean = loss_of(model, problem.clean.features, problem.clean.labels)
        if clean < best.clean_loss:
            best = Best(epoch, clean, loss_of(model, features, labels))
    return best
