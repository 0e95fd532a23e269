"""Loss spikes (reference solution): the loss no longer jumps at the same step of every epoch.

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

import copy
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 0.5  # plain gradient descent
EPOCHS = 8  # the same batches, in the same order, every epoch
Batches = list[tuple[torch.Tensor, torch.Tensor]]


def quiet(name: str, step: int, value: float) -> None:
    """The copies draw no curve."""


def fit(model: nn.Module, batches: Batches, report: Callable[..., None]) -> list[float]:
    """The loop as it was, on the given batches; returns the loss of every step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for _epoch in range(EPOCHS):
        for inputs, labels in batches:
            loss = F.cross_entropy(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            report("loss", len(losses) - 1, losses[-1])
    return losses


def train(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    batches = list(zip(inputs, labels, strict=True))
    # Where does the loss jump? On a copy trained as before, the batch that is the worst of
    # its epoch in most epochs after the first: the same place every time is one batch.
    by_epoch = torch.tensor(fit(copy.deepcopy(model), batches, quiet)).view(EPOCHS, -1)
    suspect = int(by_epoch[1:].argmax(dim=1).mode().values)
    # Which of its examples? Ask a copy that learned from every other batch: where it finds a
    # label worse than guessing (a loss above ln 4), the label contradicts the rest of the data.
    others = copy.deepcopy(model)
    fit(others, batches[:suspect] + batches[suspect + 1 :], quiet)
    with torch.no_grad():
        losses = F.cross_entropy(others(inputs[suspect]), labels[suspect], reduction="none")
    keep = losses <= math.log(4)
    print(f"batch {suspect}: left out {int((~keep).sum())} of its {len(keep)} examples")
    batches[suspect] = (inputs[suspect][keep], labels[suspect][keep])
    fit(model, batches, report)


# mypy: disable-error-code="no-untyped-call"
