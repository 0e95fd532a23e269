"""Loss spikes. Fix train() so that the loss stops jumping at the same step of every epoch.

The judge calls train(model, inputs, labels, report) on its own data (hidden seeds) and watches
every step: which examples went into the model, the loss they gave at the weights they met,
and how the weights moved. Train `model` in place; the return value is ignored.

    model    the small MLP: (n, 16) float32 features -> (n, 4) logits
    inputs   (10, 16, 16) float32: 10 batches of 16 examples with 16 features each
    labels   (10, 16) int64: the class of each example, 0-3
    report   report(name, step, value) draws a point on your live curve

The judge reads your steps from the weights, so keep to plain SGD (no momentum), run the model
on examples picked out of `inputs` as they are, and train on their labels as given.
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 0.5  # plain gradient descent
EPOCHS = 8  # the same batches, in the same order, every epoch


def train(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    step = 0
    for _epoch in range(EPOCHS):
        for batch in range(len(inputs)):
            loss = F.cross_entropy(model(inputs[batch]), labels[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            report("loss", step, loss.item())
            step += 1


# mypy: disable-error-code="no-untyped-call"
