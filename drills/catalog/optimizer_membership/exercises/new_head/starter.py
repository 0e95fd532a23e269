"""Optimizer membership. Fix fine_tune() so that the new head learns.

The judge calls fine_tune(model, new_head, features, labels, report) with its own model (shaped
like Classifier below, still wearing the old task's 10-class head), a fresh 4-class head and one
fixed batch of the new task (on hidden seeds). Afterwards it compares every parameter with where
fine-tuning started, and measures the loss of the weights your loop leaves behind.

    model     a Classifier: backbone (16 features -> 32 learned ones), head (-> 10 logits)
    new_head  nn.Linear(32, 4): the new task's head; it must end up as model.head
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
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))  # type: ignore[no-any-return]


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.Adam(model.parameters(), lr=LR)


def fine_tune(
    model: Classifier,
    new_head: nn.Linear,
    features: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = make_optimizer(model)
    # The new task has its own classes: swap the old head for the new one.
    model.head = new_head
    model.train()
    for step in range(STEPS):
        loss = F.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())


if __name__ == "__main__":
    # A local run on a model of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net, head = Classifier(10), nn.Linear(32, 4)
    head_before = head.weight.detach().clone()
    xs = torch.randn(64, 16)
    ys = (xs @ torch.randn(16, 4)).argmax(dim=1)
    fine_tune(net, head, xs, ys, lambda name, step, value: None)
    print("new head moved by", float((net.head.weight.detach() - head_before).norm()))
    with torch.no_grad():
        print("loss on the batch:", F.cross_entropy(net(xs), ys).item())

# mypy: disable-error-code="no-untyped-call"
