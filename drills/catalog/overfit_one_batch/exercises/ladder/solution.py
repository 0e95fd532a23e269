"""Overfit on 1, then 2, then 5 examples (reference solution).

The judge calls overfit_ladder(make_model, features, labels, report) on a small labelled set
of its own (hidden seeds, several widths and numbers of classes). For each rung k of 1, 2 and
5: build a fresh model with make_model(), train it on the first k examples of the set, and on
nothing else, until its loss on them is below 0.01 nats (at most 1000 steps). Return the three
trained models as {1: model, 2: model, 5: model}. The judge measures each one's loss on its k
examples from the weights, in eval mode; it reads nothing you print or report.

    make_model  builds a fresh MLP (features in, one logit per class out) at each call
    features    (N, F) float32, the whole set; labels (N,) int64
    report      report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

RUNGS = (1, 2, 5)
TARGET = 0.01  # nats: a working loop memorises a handful of examples
MAX_STEPS = 1000


def fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, report: Callable, name: str) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for step in range(MAX_STEPS):
        loss = F.cross_entropy(model(x), y)
        if loss.item() < TARGET:
            break  # below the target before this step: done
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report(name, step, loss.item())


def overfit_ladder(
    make_model: Callable[[], nn.Module],
    features: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> dict[int, nn.Module]:
    models = {}
    for k in RUNGS:
        model = make_model()  # a fresh one per rung: each starts from scratch
        fit(model, features[:k], labels[:k], report, f"loss, {k} examples")
        models[k] = model
    return models


if __name__ == "__main__":
    # A local run on a set of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs, ys = torch.randn(32, 16), torch.randint(4, (32,))
    ladder = overfit_ladder(
        lambda: nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)),
        xs,
        ys,
        lambda name, step, value: None,
    )
    for k, net in ladder.items():
        print(k, "examples:", F.cross_entropy(net.eval()(xs[:k]), ys[:k]).item())

# mypy: disable-error-code="no-untyped-call, type-arg"
