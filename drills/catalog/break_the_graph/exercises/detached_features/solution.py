"""Break the graph (reference solution): the whole model learns.

The judge calls train(model, features, labels, report) with its own model (shaped like
Classifier below) and one fixed batch (on hidden seeds), then compares every parameter before
and after, and measures the loss of the weights your loop leaves behind. Train `model` in place;
the return value is ignored.

    model     a Classifier: backbone (16 features -> 32 learned ones), then head (-> 4 logits)
    features  (64, 16) float32: the batch
    labels    (64,) int64: the class of each example, 0..3
    report    report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

STEPS = 100  # optimizer steps, every one on the same batch
LR = 1e-2  # Adam's learning rate


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))  # type: ignore[no-any-return]


def train(
    model: Classifier,
    features: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for step in range(STEPS):
        hidden = model.backbone(features)
        # The dashboard plots the features' size from a copy off the graph; the head reads
        # the features themselves, so backward reaches the backbone through them.
        snapshot = hidden.detach()
        report("feature size", step, snapshot.norm(dim=1).mean().item())

        logits = model.head(hidden)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())


if __name__ == "__main__":
    # A local run on a batch of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net = Classifier()
    start = [p.detach().clone() for p in net.parameters()]
    xs = torch.randn(64, 16)
    ys = (xs @ torch.randn(16, 4)).argmax(dim=1)
    train(net, xs, ys, lambda name, step, value: None)
    for (name, p), p0 in zip(net.named_parameters(), start, strict=True):
        print(f"{name:<20} moved {float((p.detach() - p0).norm()):.4f}")
    with torch.no_grad():
        print("loss on the batch:", F.cross_entropy(net(xs), ys).item())

# mypy: disable-error-code="no-untyped-call"
