"""Overfit on 1, then 2, then 5 examples. Write overfit_ladder().

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


def overfit_ladder(
    make_model: Callable[[], nn.Module],
    features: torch.Tensor,
    labels: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> dict[int, nn.Module]:
    raise NotImplementedError("write overfit_ladder()")


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
