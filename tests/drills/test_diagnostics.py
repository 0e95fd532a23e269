import math

import pytest
import torch
from torch import nn

from drills.kit.audit import (
    ParameterAudit,
    grad_state,
    relative_weight_change,
    total_grad_norm,
)


def train_a_few_steps() -> list[dict[str, object]]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    frozen, excluded, trained = model[0], model[2], model[4]
    frozen.requires_grad_(False)
    # The middle layer gets gradients but was left out of the optimizer.
    optimizer = torch.optim.SGD(trained.parameters(), lr=0.1)
    audit = ParameterAudit(model, optimizer)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for _ in range(3):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        audit.after_backward()
        optimizer.step()
    assert excluded.weight.grad is not None
    return audit.rows()


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, object]]:
    return {str(row["name"]): row for row in train_a_few_steps()}


def test_rows_have_exactly_the_audit_keys(rows: dict[str, dict[str, object]]) -> None:
    keys = {"name", "requires_grad", "in_optimizer", "grad", "grad_norm", "update_norm",
            "weight_norm", "update_ratio"}  # fmt: skip
    assert all(set(row) == keys for row in rows.values())


def test_a_frozen_parameter_has_no_grad_and_does_not_move(
    rows: dict[str, dict[str, object]],
) -> None:
    row = rows["0.weight"]
    assert row["requires_grad"] is False
    assert row["grad"] == "none" and row["grad_norm"] is None
    assert row["update_norm"] == 0.0


def test_a_parameter_left_out_of_the_optimizer_gets_grads_but_no_updates(
    rows: dict[str, dict[str, object]],
) -> None:
    row = rows["2.weight"]
    assert row["in_optimizer"] is False
    assert row["grad"] == "finite"
    assert isinstance(row["grad_norm"], float) and row["grad_norm"] > 0
    assert row["update_norm"] == 0.0
    assert row["update_ratio"] == 0.0


def test_an_optimized_parameter_moves(rows: dict[str, dict[str, object]]) -> None:
    row = rows["4.weight"]
    assert row["in_optimizer"] is True and row["grad"] == "finite"
    assert isinstance(row["update_norm"], float) and row["update_norm"] > 0
    assert isinstance(row["weight_norm"], float)
    assert row["update_ratio"] == pytest.approx(row["update_norm"] / row["weight_norm"])


@pytest.mark.parametrize(
    ("grad", "state"),
    [
        (None, "none"),
        (torch.zeros(3), "zero"),
        (torch.tensor([3.0, 4.0]), "finite"),
        (torch.tensor([1.0, math.nan]), "nonfinite"),
        (torch.tensor([math.inf]), "nonfinite"),
    ],
)
def test_grad_state(grad: torch.Tensor | None, state: str) -> None:
    assert grad_state(grad)[0] == state


def test_total_grad_norm_matches_a_loop() -> None:
    model = nn.Linear(5, 3)
    model(torch.randn(4, 5)).sum().backward()
    by_hand = math.sqrt(
        sum(float(p.grad.norm()) ** 2 for p in model.parameters() if p.grad is not None)
    )
    assert total_grad_norm(model.parameters()) == pytest.approx(by_hand)
    assert total_grad_norm(nn.Linear(2, 2).parameters()) == 0.0


def test_relative_weight_change() -> None:
    rows = [{"update_norm": 3.0, "weight_norm": 6.0}, {"update_norm": 4.0, "weight_norm": 8.0}]
    assert relative_weight_change(rows) == pytest.approx(0.5)
    assert relative_weight_change([{"update_norm": 0.0, "weight_norm": 0.0}]) is None
