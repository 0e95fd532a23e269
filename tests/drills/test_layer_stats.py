import math
from collections import OrderedDict

import pytest
import torch
from torch import nn

from drills.kit.layer_stats import LayerActivations, LayerGradients
from drills.kit.run import Run


class Points:
    def __init__(self) -> None:
        self.points: list[tuple[str, int, float]] = []

    def metric(self, name: str, step: int, value: float) -> None:
        self.points.append((name, step, value))


class Net(nn.Sequential):
    """The layers by name, typed (nn.Sequential's own attribute lookup is untyped)."""

    first: nn.Linear
    relu: nn.ReLU
    last: nn.Linear


def model() -> Net:
    torch.manual_seed(0)
    return Net(OrderedDict(first=nn.Linear(3, 4), relu=nn.ReLU(), last=nn.Linear(4, 2)))


def test_gradient_norm_and_update_ratio_per_layer_agree_with_a_plain_computation() -> None:
    net = model()
    run = Run(0, Points())
    probe = LayerGradients(run, {"first": net.first, "last": net.last})
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    before = [p.detach().clone() for p in net.last.parameters()]
    net(torch.randn(5, 3)).pow(2).sum().backward()
    grads = probe.after_backward(0)
    optimizer.step()
    ratios = probe.after_step(0)

    grads_of_last = [p.grad for p in net.last.parameters() if p.grad is not None]
    expected_grad = math.sqrt(sum(float(g.pow(2).sum()) for g in grads_of_last))
    change = math.sqrt(
        sum(
            float((p.detach() - b).pow(2).sum())
            for p, b in zip(net.last.parameters(), before, strict=True)
        )
    )
    size = math.sqrt(sum(float(b.pow(2).sum()) for b in before))
    assert grads["last"] == pytest.approx(expected_grad)
    assert ratios["last"] == pytest.approx(change / size)
    assert run.values("grad@last") == [grads["last"]]
    assert run.values("update_ratio@first") == [ratios["first"]]


def test_no_gradient_and_no_step_log_zero() -> None:
    net = model()
    net.first.requires_grad_(False)
    run = Run(0, Points())
    probe = LayerGradients(run, {"first": net.first})
    net(torch.randn(5, 3)).sum().backward()
    probe.after_backward(0)
    probe.after_step(0)  # no optimizer step in between
    assert run.values("grad@first") == [0.0]
    assert run.values("update_ratio@first") == [0.0]


def test_activations_count_units_dead_on_every_example() -> None:
    net = model()
    with torch.no_grad():
        net.first.bias[:2] = -100.0  # two of four units can never fire
    run = Run(0, Points())
    probe = LayerActivations(run, {"hidden": net.relu})
    output = net.relu(net.first(torch.randn(8, 3)))
    probe.log(0)
    probe.close()
    assert run.values("dead@hidden") == [0.5]
    assert run.values("act@hidden") == [pytest.approx(float(output.detach().abs().mean()))]
