"""Rare cases (reference solution): the model catches them without calling everything a case.

The judge calls train(model, features, labels, report) on its own data (hidden seeds, where
the rare class's share is not this file's 5%). It then takes the weights your loop leaves behind
and scores them on examples of its own: how many rare ones the model finds, and how many common
ones it still calls common. The model's answer is the class with the larger logit, and nothing
your loop reports is read. Train `model` in place; the return value is ignored.

    model     the small MLP: (n, 8) float32 features -> (n, 2) logits; class 1 is the rare one
    features  (20000, 8) float32: the training examples
    labels    (20000,) int64: 0 for a common example, 1 for a rare one
    report    report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 1e-2  # Adam
STEPS = 300
BATCH = 512


def train(
    model: nn.Module,
    features: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    # Plain cross-entropy counts every example once, so the common class outvotes the rare one
    # wherever the two overlap, and the cheapest answer there is "common". Weigh each class by
    # the inverse of its count in the data given (not a number fixed in advance: the share
    # differs from run to run), so that both classes weigh the same in the loss.
    counts = torch.bincount(labels, minlength=2).float()
    class_weights = len(labels) / (2 * counts)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for step in range(STEPS):
        batch = torch.randint(len(labels), (BATCH,))
        logits = model(features[batch])
        loss = F.cross_entropy(logits, labels[batch], weight=class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())
        if step % 25 == 0:
            # Accuracy hides the rare class: watch what the model finds of each class.
            answers = logits.argmax(dim=1)
            for name, kind in (("common kept", 0), ("rare found", 1)):
                mine = labels[batch] == kind
                report(name, step, (answers[mine] == kind).float().mean().item())


if __name__ == "__main__":
    # A local run on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    direction = F.normalize(torch.randn(8), dim=0)
    cases = (torch.rand(20000) < 0.05).long()
    points = torch.randn(20000, 8) + cases[:, None] * direction
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
    train(net, points, cases, lambda name, step, value: print(f"{name} {step}: {value:.3f}"))

# mypy: disable-error-code="no-untyped-call"
