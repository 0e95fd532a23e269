"""Hunt the NaN (reference solution): training stays finite and its loss stays right.

The judge calls log_probs(logits) on logits of its own choosing and compares what comes back,
and the gradient of the token loss through it, with its own numbers in float64. It calls
train(model, batches, report) once for a single step from a network whose logits are already
far apart, and once for a whole run from fresh weights, on hidden seeds, and measures the loss
your trained weights reach on tokens they never saw. Train `model` in place.

    logits   (..., 4) float32 scores over 4 classes, last dimension the classes
    model    maps (B, L, 8) float32 features to (B, L, 4) logits (already divided by 0.1)
    batches  a list of (features (B, L, 8), labels (B, L) int64, mask (B, L) bool) triples,
             one a step; mask is True at real tokens and False at padding
    report   report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
from torch import nn

LR = 0.05  # SGD with momentum
MOMENTUM = 0.9


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    """The log-probability of each class, over the last dimension."""
    # softmax rounds a class far below the top one to a probability of exactly 0 (in float32
    # once it sits about 104 below), and log(0) is -inf; its gradient, 1/0 times 0, is NaN.
    # log_softmax computes z - max(z) - log(sum(exp(z - max(z)))): no probability is formed,
    # so nothing rounds to 0, and a class 1000 below the top gets about -1000, as it should.
    return torch.log_softmax(logits, dim=-1)


def token_loss(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean negative log-likelihood of the labels over the real tokens."""
    picked = log_probs(logits).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return -picked[mask].mean()


Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def train(
    model: nn.Module, batches: list[Batch], report: Callable[[str, int, float], None]
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for step, (features, labels, mask) in enumerate(batches):
        loss = token_loss(model(features), labels, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())


if __name__ == "__main__":
    # A local run on tokens of your own (the judge ignores this block and builds its own).
    class Sharpened(nn.Sequential):
        def forward(self, features: torch.Tensor) -> torch.Tensor:
            logits: torch.Tensor = super().forward(features)
            return logits / 0.1  # as the judge's network does

    torch.manual_seed(0)
    teacher = torch.randn(8, 4)
    net = Sharpened(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
    stream = []
    for _ in range(150):
        mask = torch.arange(12) < torch.randint(4, 13, (8, 1))
        features = torch.randn(8, 12, 8) * mask[..., None]
        stream.append((features, (features @ teacher).argmax(-1) * mask, mask))
    losses: list[float] = []
    train(net, stream, lambda name, step, value: losses.append(value))
    print("the loss every 10 steps:", [round(value, 3) for value in losses[::10]])

# mypy: disable-error-code="no-untyped-call"
