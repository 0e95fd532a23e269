import functools
from typing import Any

import pytest

from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "silent-no-learning"
drill = get_drill(SLUG)
EXPECTED = {
    "none": "healthy",
    "requires-grad-off": "frozen",
    "no-step": "no-step",
    "no-zero-grad": "accumulating",
    "argmax-before-loss": "no-graph",
}


@functools.cache
def run(bug: str = "none", seed: int = 0) -> dict[str, Any]:
    return run_drill(SLUG, {"bug": bug}, seed)


def rows(bug: str, seed: int) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in run(bug, seed)["diagnostics"]["parameters"]}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_healthy_loop_moves_everything_and_learns(seed: int) -> None:
    sig = run("none", seed)["signature"]
    assert sig["moved_share"] == 1.0
    assert sig["grad_finite"] == sig["parameters"] == 6
    assert sig["loss_has_grad_fn"] is True
    assert sig["grad_norm_growth"] < 2.0
    assert sig["final_loss"] < 0.5 * sig["initial_loss"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_frozen_layer_has_no_gradient_and_no_update(seed: int) -> None:
    sig = run("requires-grad-off", seed)["signature"]
    audit = rows("requires-grad-off", seed)
    for name in ("hidden1.weight", "hidden1.bias"):
        assert audit[name]["requires_grad"] is False
        assert audit[name]["in_optimizer"] is True  # held by the optimizer, and still skipped
        assert audit[name]["grad"] == "none"
        assert audit[name]["update_norm"] == 0.0
    assert all(audit[name]["update_norm"] > 0 for name in audit if not name.startswith("hidden1"))
    assert sig["frozen"] == 2 and sig["moved"] == 4
    assert all(
        value == 0.0 for _, value in run("requires-grad-off", seed)["metrics"]["grad@hidden1"]
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_without_a_step_gradients_are_finite_and_nothing_moves(seed: int) -> None:
    record = run("no-step", seed)
    sig = record["signature"]
    audit = rows("no-step", seed)
    assert all(row["grad"] == "finite" and row["update_norm"] == 0.0 for row in audit.values())
    assert sig["moved"] == 0 and sig["grad_finite"] == 6
    for name, points in record["metrics"].items():
        if name.startswith("update_ratio@"):
            assert all(value == 0.0 for _, value in points)
    assert 0.7 < sig["grad_norm_growth"] < 1.4  # the same weights give gradients of one size
    assert sig["final_loss"] == pytest.approx(sig["initial_loss"], rel=0.05)


@pytest.mark.parametrize("seed", SEEDS)
def test_without_zero_grad_the_gradient_norm_grows(seed: int) -> None:
    sig = run("no-zero-grad", seed)["signature"]
    healthy = run("none", seed)["signature"]
    assert sig["grad_norm_growth"] > 4.0
    assert sig["grad_norm_growth"] > 3 * healthy["grad_norm_growth"]
    assert sig["moved_share"] == 1.0
    assert sig["final_loss"] > healthy["final_loss"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_loss_from_argmax_reaches_no_parameter(seed: int) -> None:
    record = run("argmax-before-loss", seed)
    sig = record["signature"]
    assert record["status"] == "ok"  # it runs: the requires_grad_(True) "fix" silenced it
    assert sig["loss_has_grad_fn"] is False
    assert sig["grad_none"] == 6 and sig["moved"] == 0
    assert sig["grad_norm_growth"] is None
    assert "does not require grad" in record["diagnostics"]["torch_error"]


@pytest.mark.parametrize("bug", EXPECTED)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_bug_on_every_seed(bug: str, seed: int) -> None:
    assert run(bug, seed)["observed"] == EXPECTED[bug]


def test_every_bug_sees_the_same_data() -> None:
    digests = {run(bug)["inputs"]["sha256"] for bug in EXPECTED}
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"loss_has_grad_fn": True, "frozen": 0, "moved": 6, "grad_norm_growth": 1.2}, "healthy"),
        ({"loss_has_grad_fn": False, "frozen": 0, "moved": 0}, "no-graph"),
        ({"loss_has_grad_fn": True, "frozen": 2, "moved": 4}, "frozen"),
        ({"loss_has_grad_fn": True, "frozen": 0, "moved": 0, "grad_finite": 6}, "no-step"),
        (
            {"loss_has_grad_fn": True, "frozen": 0, "moved": 6, "grad_norm_growth": 6.0},
            "accumulating",
        ),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
