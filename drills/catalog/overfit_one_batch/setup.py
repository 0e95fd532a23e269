"""The pieces the overfit-one-batch drill trains with: config, the one batch, the model, losses."""

from __future__ import annotations

import hashlib
import struct
import warnings
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.mode_blind import ModeBlindDropout, ModeBlindNoise

PADDING = -100  # cross_entropy's default ignore_index: a label that does not count


@dataclass(frozen=True)
class OverfitConfig:
    examples: int = 8  # size of the one batch we train on
    bug: str = "none"  # which data bug to inject (see BUGS)
    lr: float = 1e-2  # Adam learning rate
    steps: int = 200  # optimizer steps on the same batch
    features: int = 16  # input width
    classes: int = 4  # labels are 0..classes-1, balanced as far as the batch size allows
    hidden: int = 64  # width of the two hidden layers: plenty to memorise 8 examples
    dropout: float = 0.3  # only active when randomness is left on
    augment_noise: float = 1.0  # std of the Gaussian noise added to inputs when randomness is on
    # std of the noise the in-place edit writes into the held batch's features at every step
    drift_noise: float = 0.1
    # The seed set again before every step when the randomness is reseeded (any constant will
    # do: what matters is that it is the same one each time).
    reseed: int = 60


@dataclass(frozen=True)
class Batch:
    features: torch.Tensor  # (examples, features) float32
    labels: torch.Tensor  # (examples,) int64 class labels
    scores: torch.Tensor  # (examples,) float32 numeric score per example, loosely tied to label


def make_batch(config: OverfitConfig, generator: torch.Generator) -> Batch:
    """The one batch, drawn from the run's data generator: every bug sees the same data."""
    n = config.examples
    labels = (torch.arange(n) % config.classes)[torch.randperm(n, generator=generator)]
    features = torch.randn(n, config.features, generator=generator)
    scores = 2.0 * labels.float() + 0.5 * torch.randn(n, generator=generator)
    return Batch(features=features, labels=labels, scores=scores)


def empty_slice(batch: Batch) -> Batch:
    """The batch cut from where its data ends (data[n:] for data[:n]): columns, but no rows."""
    n = len(batch.labels)
    return Batch(features=batch.features[n:], labels=batch.labels[n:], scores=batch.scores[n:])


class MLP(nn.Module):
    def __init__(self, config: OverfitConfig, outputs: int, mode_blind: bool = False) -> None:
        super().__init__()
        # Mode-blind (the "randomness-built-in" bug): the model adds its own input noise and
        # drops units whatever mode it is in, so model.eval() switches neither off.
        dropout = ModeBlindDropout if mode_blind else nn.Dropout
        self.noise = ModeBlindNoise(config.augment_noise) if mode_blind else None
        self.net = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.ReLU(),
            dropout(config.dropout),
            nn.Linear(config.hidden, config.hidden),
            nn.ReLU(),
            dropout(config.dropout),
            nn.Linear(config.hidden, outputs),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.noise is not None:
            x = self.noise(x)
        return self.net(x)  # type: ignore[no-any-return]


def entropy_of_labels(labels: torch.Tensor, classes: int) -> float:
    """Entropy (nats) of the batch's label frequencies: the best loss without using the inputs."""
    counts = torch.bincount(labels, minlength=classes).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * p.log()).sum()) + 0.0  # + 0.0 turns -0.0 (one class) into 0.0


def probability_of_true_class(logits: torch.Tensor, labels: torch.Tensor) -> float:
    probs = logits.detach().softmax(dim=-1)
    return float(probs.gather(1, labels[:, None]).mean())


def broadcast_mse(prediction: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, list[str]]:
    """The bug: (N, 1) against (N,) broadcasts to (N, N), comparing every pair of examples.

    torch warns about it in one line that is easy to lose in a training log; we collect the
    warning text for the diagnostics rather than let it scroll by (or abort a strict test run).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = F.mse_loss(prediction, target)
    return loss, [str(warning.message) for warning in caught]


def batch_digest(batch: Batch) -> str:
    sha = hashlib.sha256()
    for values, fmt in ((batch.features, "f"), (batch.labels, "q"), (batch.scores, "f")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_inputs(batch: Batch, targets: torch.Tensor, bug: str) -> dict[str, Any]:
    examples = []
    for i in range(min(3, len(batch.labels))):
        examples.append(
            {
                "features_first4": [round(v, 3) for v in batch.features[i, :4].tolist()],
                "label": int(batch.labels[i]),
                "score": round(float(batch.scores[i]), 3),
                "target_in_loss": round(float(targets[i]), 3)
                if targets.is_floating_point()
                else int(targets[i]),
            }
        )
    return {
        "shapes": {
            "features": list(batch.features.shape),
            "labels": list(batch.labels.shape),
            "scores": list(batch.scores.shape),
            "prediction": {
                "broadcast-target": [len(batch.labels), 1],
                "batch-averaged-output": [1],
            }.get(bug),
        },
        "sha256": batch_digest(batch),
        "examples": examples,
        "note": {
            "shuffled-labels": "the targets in the loss are re-permuted every step",
            "broadcast-target": "the loss regresses the score with a (N, 1) prediction",
            "batch-averaged-output": "the score is regressed with the output pooled over the batch",
            "all-padding": f"every label is replaced by the padding value {PADDING}",
            "empty-slice": "the batch is sliced from where the data ends",
        }.get(bug),
    }
