import math

import pytest
import torch
from torch import nn

from drills.kit.nonfinite import Finding, FirstNonFinite, first_in, inspect_tensor


class Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class Pair(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, x / 0.0


class CalledOutOfOrder(nn.Module):
    """Registers `late` before `early` but calls `early` first: execution order must win."""

    def __init__(self) -> None:
        super().__init__()
        self.late = Log()
        self.early = Log()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.late(self.early(x) - 10.0)
        return out


def tiny_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def linear(model: nn.Sequential, index: int) -> nn.Linear:
    """The model's layer at `index`, typed as the Linear it is."""
    layer = model[index]
    assert isinstance(layer, nn.Linear)
    return layer


def test_inspect_tensor_classifies_nan_and_inf() -> None:
    assert inspect_tensor("data", "x", 0, torch.ones(3)) is None
    assert inspect_tensor("data", "ids", 0, torch.arange(3)) is None  # integers are finite
    inf = inspect_tensor("data", "x", 2, torch.tensor([1.0, -math.inf, math.inf]))
    assert inf == Finding("data", "x", 2, "inf", count=2, numel=3)
    # A NaN anywhere makes the kind "nan", even beside infinities.
    mixed = inspect_tensor("loss", "loss", 0, torch.tensor([math.inf, math.nan]))
    assert mixed is not None and (mixed.kind, mixed.count) == ("nan", 2)


def test_first_in_keeps_the_given_order_and_skips_missing_tensors() -> None:
    named = [("a", None), ("b", torch.tensor([math.inf])), ("c", torch.tensor([math.nan]))]
    finding = first_in("gradient", 5, named)
    assert finding is not None and (finding.name, finding.step) == ("b", 5)


def test_data_stage() -> None:
    with FirstNonFinite(tiny_model()) as finder:
        finder.begin_step(3)
        batch = {"features": torch.zeros(2, 3), "labels": torch.tensor([0, 1])}
        assert finder.check_data(batch) is None
        batch["features"][1, 2] = math.nan
        finding = finder.check_data(batch)
    assert finding == Finding("data", "features", 3, "nan", count=1, numel=6)


def test_activation_stage_names_the_module_that_made_it() -> None:
    first = nn.Linear(3, 4)
    model = nn.Sequential(first, Log(), nn.Linear(4, 2))
    with torch.no_grad():
        first.weight.fill_(1.0)
        first.bias.zero_()
    with FirstNonFinite(model) as finder:
        finder.begin_step(0)
        model(torch.tensor([[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]]))
        finding = finder.check_activations()
    # The second row's Linear outputs are -3: their log is NaN. The Linear after it and the
    # Sequential itself are non-finite too, but they finish later.
    assert finding is not None
    assert (finding.stage, finding.name, finding.kind) == ("activation", "1", "nan")


def test_activations_are_checked_in_execution_order_children_before_parents() -> None:
    model = CalledOutOfOrder()
    with FirstNonFinite(model) as finder:
        finder.begin_step(0)
        model(torch.tensor([-1.0, 2.0]))
        finding = finder.check_activations()
    assert finding is not None and finding.name == "early"


def test_the_root_module_and_tuple_outputs_are_named() -> None:
    model = Pair()
    with FirstNonFinite(model) as finder:
        finder.begin_step(0)
        model(torch.ones(2))
        finding = finder.check_activations()
    assert finding is not None and (finding.name, finding.kind) == ("model[1]", "inf")


def test_begin_step_forgets_the_previous_steps_activation() -> None:
    model = nn.Sequential(Log())
    with FirstNonFinite(model) as finder:
        finder.begin_step(0)
        model(torch.tensor([-1.0]))
        assert finder.check_activations() is not None
        finder.begin_step(1)
        model(torch.tensor([1.0]))
        assert finder.check_activations() is None


def test_loss_stage() -> None:
    model = tiny_model()
    with FirstNonFinite(model) as finder:
        finder.begin_step(7)
        out = model(torch.ones(4, 3))
        assert finder.check_activations() is None
        mask = torch.zeros(4, 2)
        loss = (out * mask).sum() / mask.sum()  # a mean over nothing: 0/0
        finding = finder.check_loss(loss)
    assert finding == Finding("loss", "loss", 7, "nan", count=1, numel=1)


def test_gradient_stage_reports_the_parameter_closest_to_the_loss_first() -> None:
    model = tiny_model()
    with FirstNonFinite(model) as finder:
        finder.begin_step(1)
        out = model(torch.ones(4, 3))
        assert finder.check_activations() is None
        # Mask after an invalid operation: x is 0 where the mask is off, where() hides
        # log(0) = -inf from the forward value, but backward still computes 0 * (1/0) = NaN.
        valid = torch.tensor([True, False])
        x = out.pow(2) * valid
        loss = torch.where(valid, torch.log(x), torch.zeros_like(x)).sum()
        assert finder.check_loss(loss) is None
        loss.backward()  # type: ignore[no-untyped-call]
        finding = finder.check_gradients()
    assert finding is not None
    assert (finding.stage, finding.kind, finding.step) == ("gradient", "nan", 1)
    assert finding.name.startswith("2.")  # the last Linear, not the first


def test_gradient_order_follows_backward_not_registration() -> None:
    model = tiny_model()
    with FirstNonFinite(model) as finder:
        finder.begin_step(0)
        model(torch.ones(2, 3)).sum().backward()
        assert finder.check_gradients() is None
        order = finder.gradient_order
        assert set(order[:2]) == {"2.weight", "2.bias"}  # the layer nearest the loss first
        assert set(order) == {name for name, _ in model.named_parameters()}


def test_parameter_stage() -> None:
    model = tiny_model()
    with FirstNonFinite(model) as finder:
        finder.begin_step(9)
        assert finder.check_parameters() is None
        with torch.no_grad():
            linear(model, 2).bias[0] = math.inf
            linear(model, 0).weight[0, 0] = math.nan
        finding = finder.check_parameters()
    # Parameters are listed in model order: the first layer's NaN comes before the head's inf.
    assert finding == Finding("parameter", "0.weight", 9, "nan", count=1, numel=12)


def test_close_removes_every_hook() -> None:
    model = nn.Sequential(Log())
    finder = FirstNonFinite(model)
    finder.close()
    finder.begin_step(0)
    model(torch.tensor([-1.0]))
    assert finder.check_activations() is None
    assert all(not module._forward_hooks for module in model.modules())


@pytest.mark.parametrize("stage", ["data", "activation", "loss", "gradient", "parameter"])
def test_describe_reads_as_a_sentence(stage: str) -> None:
    finding = Finding(stage, "head.bias", 40, "nan", 4, 4)  # type: ignore[arg-type]
    assert finding.describe() == f"{stage} 'head.bias' at step 40: 4 of 4 elements are nan"
