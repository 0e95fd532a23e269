"""The hidden data of the rare-class exercise, rebuilt from a seed: trusted code for both the
harness (inside the sandbox) and the checks (outside). The data and the model are the drill's
imbalanced task (drills/catalog/loss_vs_metric/imbalanced.py): 8 features of unit noise, the
rare class moved one noise standard deviation along one direction, so the classes overlap a
lot, and the drill's MLP. Unlike the drill, the rare share is neither the drill's 5% nor the
starter's, and the training set is a fixed one the learner's loop is handed whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from drills.catalog.loss_vs_metric.imbalanced import ImbalancedConfig

# The rare class's share of the training examples, per hidden run: rarer than the starter's 5%,
# then commoner. A correction sized for 5% is too weak at the first and too strong at the second.
SHARES = (0.02, 0.15)
TRAINING = 20_000  # examples handed to train(); 400 rare ones at 2%
# The judge's own examples, as many of each class: a recall per class is read to about 0.007.
HELD_OUT = 4_000


@dataclass(frozen=True)
class Problem:
    share: float  # of rare examples in `labels`
    config: ImbalancedConfig
    model: nn.Module  # at its initial weights, fixed by the seed
    direction: torch.Tensor  # (8,) unit vector: where the rare class lies from the common one
    features: torch.Tensor  # (TRAINING, 8): what train() is given
    labels: torch.Tensor  # (TRAINING,) int64: 1 for rare, shuffled
    held_features: torch.Tensor  # (2 * HELD_OUT, 8): the judge's examples, never handed out
    held_labels: torch.Tensor  # (2 * HELD_OUT,) int64: HELD_OUT common, then HELD_OUT rare


def make_model(config: ImbalancedConfig) -> nn.Module:
    """The drill's classifier: (n, 8) features to (n, 2) logits, class 1 the rare one."""
    return nn.Sequential(
        nn.Linear(config.features, config.hidden), nn.ReLU(), nn.Linear(config.hidden, 2)
    )


def build(case: int, seed: int) -> Problem:
    share = SHARES[case]
    config = ImbalancedConfig(share)
    generator = torch.Generator().manual_seed(seed)
    direction = torch.randn(config.features, generator=generator)
    direction /= direction.norm()

    def features_for(labels: torch.Tensor) -> torch.Tensor:
        noise = torch.randn(len(labels), config.features, generator=generator)
        return noise + config.separation * labels[:, None].float() * direction

    # Exactly the intended share of rare examples, in a random order.
    labels = torch.zeros(TRAINING, dtype=torch.int64)
    labels[: round(share * TRAINING)] = 1
    labels = labels[torch.randperm(TRAINING, generator=generator)]
    features = features_for(labels)
    held_labels = torch.arange(2).repeat_interleave(HELD_OUT)
    held_features = features_for(held_labels)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = make_model(config)
    return Problem(share, config, model, direction, features, labels, held_features, held_labels)


def fresh_model(problem: Problem) -> nn.Module:
    """A new model at the problem's initial weights."""
    model = make_model(problem.config)
    model.load_state_dict(problem.model.state_dict())
    return model


def true_log_odds(problem: Problem, features: torch.Tensor, share: float) -> torch.Tensor:
    """log P(rare | x) / P(common | x) of this synthetic data where the rare share is `share`:
    the best any classifier can know about an example."""
    separation = problem.config.separation
    prior = math.log(share / (1 - share))
    return prior + separation * (features @ problem.direction) - separation**2 / 2
