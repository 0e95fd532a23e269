"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The batch is the drill's own (drills/catalog/
overfit_one_batch/setup.py); the model is a plain MLP without dropout."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.overfit_one_batch.setup import OverfitConfig, make_batch

EXAMPLES = (1, 2, 5)  # the batch size of each hidden run: the overfit ladder 1 -> 2 -> 5


@dataclass(frozen=True)
class Problem:
    config: OverfitConfig
    model: nn.Module  # at its initial weights, fixed by the seed
    features: torch.Tensor
    labels: torch.Tensor


def make_model(config: OverfitConfig) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(config.features, config.hidden),
        nn.ReLU(),
        nn.Linear(config.hidden, config.hidden),
        nn.ReLU(),
        nn.Linear(config.hidden, config.classes),
    )


def build(case: int, seed: int) -> Problem:
    config = OverfitConfig(examples=EXAMPLES[case])
    batch = make_batch(config, torch.Generator().manual_seed(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = make_model(config)
    return Problem(config, model, batch.features, batch.labels)


@torch.no_grad()
def batch_loss(model: nn.Module, problem: Problem) -> float:
    """Cross-entropy of `model` on the batch's true pairs, in eval mode."""
    model.eval()
    return float(F.cross_entropy(model(problem.features), problem.labels))


@torch.no_grad()
def p_correct(model: nn.Module, problem: Problem) -> float:
    model.eval()
    probs = model(problem.features).softmax(dim=-1)
    return float(probs.gather(1, problem.labels[:, None]).mean())
