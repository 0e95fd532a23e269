"""The loop runs, nothing learns (reference solution): every step reaches the weights.

The judge calls train(model, batches, lr, report) with its own network (shaped like the one
make_model() builds) and its own minibatches (on hidden seeds): once with the first two batches
only, once with all of them. It compares the two steps with two steps of plain SGD at `lr` on
the same batches from the same weights, then reads what the whole run did to every parameter
and the training loss of the weights it leaves behind. Train `model` in place; the return
value is ignored.

    model    nn.Sequential: hidden1 Linear(8, 64), ReLU, hidden2 Linear(64, 64), ReLU,
             output Linear(64, 4)
    batches  a list of (features (64, 8) float32, labels (64,) int64), one step each
    lr       the SGD learning rate to train at
    report   report(name, step, value) draws a point on your live curve
"""

from collections import OrderedDict
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

Report = Callable[[str, int, float], None]


def plot_gradients(model: nn.Module, step: int, report: Report) -> None:
    """The dashboard's gradient panel: every parameter's gradient norm at this step."""
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            # Read only: the optimizer's step still needs this gradient after the panel.
            report(f"grad {name}", step, parameter.grad.norm().item())


def train(
    model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]], lr: float, report: Report
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step, (features, labels) in enumerate(batches):
        loss = F.cross_entropy(model(features), labels)
        # Cleared before each backward, which adds into .grad: the step follows this batch only.
        optimizer.zero_grad()
        loss.backward()
        plot_gradients(model, step, report)
        optimizer.step()
        report("loss", step, loss.item())


def make_model() -> nn.Sequential:
    """The kind of network the judge builds."""
    return nn.Sequential(
        OrderedDict(
            hidden1=nn.Linear(8, 64),
            relu1=nn.ReLU(),
            hidden2=nn.Linear(64, 64),
            relu2=nn.ReLU(),
            output=nn.Linear(64, 4),
        )
    )


if __name__ == "__main__":
    # A local run on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs = torch.randn(512, 8)
    ys = (xs @ torch.randn(8, 4)).argmax(dim=1)
    net = make_model()
    epoch = [(xs[i : i + 64], ys[i : i + 64]) for i in range(0, 512, 64)]
    with torch.no_grad():
        print("training loss before:", F.cross_entropy(net(xs), ys).item())
    train(net, (epoch * 19)[:150], 0.1, lambda name, step, value: None)
    with torch.no_grad():
        print("training loss after 150 steps:", F.cross_entropy(net(xs), ys).item())

# mypy: disable-error-code="no-untyped-call"
