"""What the NaN hunt trains: its config, the token batches with each cause injected, the model and
the masked losses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class NanHuntConfig:
    cause: str = "none"
    steps: int = 150
    sequences: int = 8  # sequences per batch
    length: int = 12  # tokens per sequence, padding included
    min_length: int = 4  # shortest real sequence (the unusual batch breaks this on purpose)
    features: int = 8  # input features per token
    hidden: int = 32
    classes: int = 4
    lr: float = 0.05  # SGD with momentum
    momentum: float = 0.9
    huge_lr_factor: float = 1e4  # what "huge-lr" multiplies the learning rate by
    # The head sharpens its logits (divides by 0.1): they grow large as the model gets confident,
    # which the stable log-softmax takes in its stride and log(softmax(z)) does not.
    temperature: float = 0.1
    unusual_step: int = 40  # the batch at this step holds an empty sequence


@dataclass(frozen=True)
class Batch:
    features: torch.Tensor  # (sequences, length, features) float32, zeros at padding
    labels: torch.Tensor  # (sequences, length) int64, 0 at padding (masked out anyway)
    mask: torch.Tensor  # (sequences, length) bool, True for real tokens


def make_batch(
    config: NanHuntConfig, generator: torch.Generator, teacher: torch.Tensor, step: int
) -> Batch:
    """One batch of the seeded stream; every cause draws the same numbers, then may spoil them."""
    lengths = torch.randint(
        config.min_length, config.length + 1, (config.sequences,), generator=generator
    )
    features = torch.randn(config.sequences, config.length, config.features, generator=generator)
    if step == config.unusual_step:
        lengths[0] = 0  # one empty sequence, e.g. a prompt whose response is all masked
        if config.cause == "zero-token-denominator":
            lengths.zero_()  # every sequence empty: no token to average over
    mask = torch.arange(config.length) < lengths[:, None]
    features = features * mask[..., None]
    labels = (features @ teacher).argmax(dim=-1) * mask  # a linear teacher decides each label
    if step == config.unusual_step and config.cause == "nan-in-data":
        features[1, 0, 3] = math.nan  # one corrupt value in a real token
    return Batch(features, labels, mask)


class Sharpen(nn.Module):
    def __init__(self, temperature: float) -> None:
        super().__init__()
        self.temperature = temperature

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return logits / self.temperature


class ManualLogSoftmax(nn.Module):
    """log(softmax(z)): softmax rounds tiny probabilities to exactly 0, and log(0) is -inf."""

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.softmax(logits, dim=-1))


class TokenClassifier(nn.Module):
    def __init__(self, config: NanHuntConfig) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(config.hidden, config.classes)
        self.sharpen = Sharpen(config.temperature)
        manual = config.cause == "manual-log-softmax"
        # nn.LogSoftmax computes z - logsumexp(z): no probability is ever rounded to 0.
        self.log_probs = ManualLogSoftmax() if manual else nn.LogSoftmax(dim=-1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.log_probs(self.score(features))  # type: ignore[no-any-return]

    def score(self, features: torch.Tensor) -> torch.Tensor:
        """The sharpened logits, before the log-softmax."""
        return self.sharpen(self.head(self.body(features)))  # type: ignore[no-any-return]


def token_nll(log_probs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Negative log-likelihood of each token's label: (sequences, length)."""
    return -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def mean_over_tokens(nll: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the batch's real tokens: 0/0 = NaN when the batch has none."""
    weights = mask.to(nll.dtype)
    return (nll * weights).sum() / weights.sum()


def mean_over_sequences_masked_after(nll: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Each sequence's mean, then the mean over non-empty sequences; the bug is the order.

    An empty sequence divides 0 by 0, and torch.where swaps the NaN for 0 only afterwards. The
    forward value is finite, but backward still passes through the division: its gradient is
    0 / 0 = NaN, and where() multiplies nothing away (NaN * 0 is NaN).
    """
    weights = mask.to(nll.dtype)
    lengths = weights.sum(dim=-1)
    per_sequence = (nll * weights).sum(dim=-1) / lengths
    per_sequence = torch.where(lengths > 0, per_sequence, torch.zeros_like(per_sequence))
    return per_sequence.sum() / (lengths > 0).sum()


def largest_logit_gap(logits: torch.Tensor) -> float:
    """The largest top-minus-bottom logit gap over all tokens (padding included)."""
    gaps = logits.detach().amax(dim=-1) - logits.detach().amin(dim=-1)
    return float(gaps.max())


def parameter_norm(model: nn.Module) -> float:
    # float64: a diverging run's weights reach 1e19 and more, whose squares overflow float32.
    return math.sqrt(sum(float(p.detach().double().pow(2).sum()) for p in model.parameters()))


def gradient_norm(model: nn.Module) -> float:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return math.sqrt(sum(float(g.detach().double().pow(2).sum()) for g in grads))
