"""Gradient accumulation. Fix train() so that k micro-batches per step train as one batch.

The judge calls train(model, micro_batches, micro_batches_per_step, report) with its own model
and micro-batches (on hidden seeds, for several values of micro_batches_per_step). It compares
one step of your loop with the step plain SGD at LR takes on one batch holding the same
examples, from the same weights, and measures the training loss of the weights your loop leaves
behind. Train `model` in place; the return value is ignored.

    model                   nn.Linear(8, 1), fitting noisy linear targets
    micro_batches           a list of (features (16, 8), targets (16, 1)) float32 pairs
    micro_batches_per_step  k: every k consecutive micro-batches make one optimizer step
    report                  report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 0.16  # plain SGD: the rate that trains this model well at one batch of 16 per step


def train(
    model: nn.Linear,
    micro_batches: list[tuple[torch.Tensor, torch.Tensor]],
    micro_batches_per_step: int,
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    k = micro_batches_per_step
    for step in range(len(micro_batches) // k):
        optimizer.zero_grad()
        step_loss = 0.0
        for features, targets in micro_batches[step * k : (step + 1) * k]:
            loss = F.mse_loss(model(features), targets)
            loss.backward()  # adds this micro-batch's gradient into .grad
            step_loss += loss.item()
        optimizer.step()
        report("loss", step, step_loss / k)  # the loss of all k x 16 examples of the step


if __name__ == "__main__":
    # A local run on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs = torch.randn(512, 8)
    ys = xs @ torch.randn(8, 1) / 8**0.5 + 0.1 * torch.randn(512, 1)
    epoch = [(xs[i : i + 16], ys[i : i + 16]) for i in range(0, 512, 16)]
    for k in (1, 8):
        net = nn.Linear(8, 1)
        train(net, (epoch * 10)[: 40 * k], k, lambda name, step, value: None)
        with torch.no_grad():
            print(f"k = {k}: training loss after 40 steps {F.mse_loss(net(xs), ys).item():.4g}")

# mypy: disable-error-code="no-untyped-call"
