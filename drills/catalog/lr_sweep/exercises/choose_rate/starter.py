"""Learning-rate sweep. Fix the loop so that it trains at a rate that works on any problem.

The judge calls choose_lr(model, x, y, candidates) on problems of its own (hidden seeds:
networks of other widths, targets in other units), then train(model, x, y, lr, STEPS, report)
on a fresh copy of the same model, at the rate choose_lr returned. It trains plain SGD at that
rate itself and reads its loss at every step, and measures the loss of the weights train()
leaves behind. Train `model` in place; choose_lr must return one number, the rate.

    model       a tanh MLP at its initial weights: model(x) has shape (64, 1)
    x, y        the whole training set, (64, 8) and (64, 1) float32: every step uses all of it
    candidates  the rates to choose from, smallest first (a tuple of floats)
    report      report(name, step, value) draws a point on your live curve
"""

import copy
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

STEPS = 150  # the steps of the judge's training run
LR = 1.0  # the rate this loop has always used


def train(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    lr: float,
    steps: int,
    report: Callable[[str, int, float], None],
) -> list[float]:
    """Plain full-batch gradient descent; returns the loss before every step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses: list[float] = []
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        report("loss", step, loss.item())
    return losses


def choose_lr(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, candidates: Sequence[float]
) -> float:
    return LR


if __name__ == "__main__":
    # A local try on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs = torch.randn(64, 8)
    for units in (1.0, 100.0):  # the same targets in metres, then in centimetres
        ys = units * 2 * torch.tanh(xs @ torch.randn(8, 1) / 8**0.5)
        layers = [nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)]
        net = nn.Sequential(*layers)
        lr = choose_lr(copy.deepcopy(net), xs, ys, (1e-4, 1e-3, 1e-2, 0.1, 1.0))
        losses = train(net, xs, ys, lr, STEPS, lambda name, step, value: None)
        print(f"targets x{units:g}: rate {lr:g}, loss {losses[0]:.4g} -> {losses[-1]:.4g}")

# mypy: disable-error-code="no-untyped-call"
