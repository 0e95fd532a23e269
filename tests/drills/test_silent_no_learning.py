import functools
from typing import Any

import pytest

from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "silent-no-learning"
drill = get_drill(SLUG)
# A loop wired right: a grad_fn, nothing frozen, every tensor moved, no gradient left uncleared.
WIRED = {"loss_has_grad_fn": True, "frozen": 0, "moved": 6, "stale_grad_steps": 0}
EXPECTED = {
    "none": "healthy",
    "requires-grad-off": "frozen",
    "no-step": "no-step",
    "no-zero-grad": "accumulating",
    "argmax-before-loss": "no-graph",
    "one-hot-argmax": "no-graph",
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
    assert sig["stale_grad_steps"] == sig["steps_run"] - 1  # every backward after the first
    assert healthy["stale_grad_steps"] == 0
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


@pytest.mark.parametrize("seed", SEEDS)
def test_a_cross_entropy_of_a_one_hot_argmax_looks_like_a_loss_and_reaches_nothing(
    seed: int,
) -> None:
    # It reads near log 4 like a real cross-entropy at chance (1.74 minus the batch accuracy),
    # which is why a case can hide it behind a step never taken; backward reaches no parameter.
    record = run("one-hot-argmax", seed)
    sig, stuck = record["signature"], run("no-step", seed)["signature"]
    assert record["status"] == "ok"
    assert sig["loss_has_grad_fn"] is False
    assert sig["grad_none"] == 6 and sig["moved"] == 0
    assert abs(sig["initial_loss"] - stuck["initial_loss"]) < 0.2
    assert "does not require grad" in record["diagnostics"]["torch_error"]


@pytest.mark.parametrize("bug", EXPECTED)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_bug_on_every_seed(bug: str, seed: int) -> None:
    assert run(bug, seed)["observed"] == EXPECTED[bug]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_loss_that_hardly_moves_is_not_read_as_learning(seed: int) -> None:
    # `python -m drills run silent-no-learning --set lr=1e-05`: wired right, every parameter
    # moves, and the loss goes 1.4085 -> 1.4055 on seed 0: within the batches' wobble, not a
    # fall (v1 said "healthy, the loss falls").
    record = run_drill(SLUG, {"lr": 1e-5}, seed)
    sig = record["signature"]
    assert sig["moved"] == sig["parameters"] and sig["stale_grad_steps"] == 0
    assert sig["final_loss"] > 0.99 * sig["initial_loss"]
    assert record["observed"] == "inconclusive"


@pytest.mark.parametrize("seed", SEEDS)
def test_ten_steps_are_too_few_to_call_it_learning(seed: int) -> None:
    record = run_drill(SLUG, {"steps": 10}, seed)
    assert record["signature"]["final_loss"] > 0.9 * record["signature"]["initial_loss"]
    assert record["observed"] == "inconclusive"


@pytest.mark.parametrize("steps", [10, 150])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_loop_wired_right_at_the_largest_rate_diverges(steps: int, seed: int) -> None:
    # The loss climbs to 17x its start and more; its gradient norm grows with it, which is no
    # sign of gradients left uncleared (v1 read some of these runs as accumulating, the rest
    # as healthy).
    record = run_drill(SLUG, {"lr": 10.0, "steps": steps}, seed)
    sig = record["signature"]
    assert sig["max_loss"] > 5 * sig["initial_loss"]
    assert sig["stale_grad_steps"] == 0
    assert record["observed"] == "diverges"


@pytest.mark.parametrize("seed", SEEDS)
def test_gradients_never_cleared_are_named_even_when_the_run_blows_up(seed: int) -> None:
    # At lr 10 the run blows up within a few steps; on seeds 1 and 4 it ends with a smaller
    # gradient norm than it had at the start, so only .grad itself tells (v1: healthy there).
    record = run_drill(SLUG, {"bug": "no-zero-grad", "lr": 10.0}, seed)
    assert record["signature"]["stale_grad_steps"] > 0
    assert record["observed"] == "accumulating"


@pytest.mark.parametrize(
    ("bug", "expected"),
    [
        ("requires-grad-off", "frozen"),
        ("no-step", "no-step"),
        ("argmax-before-loss", "no-graph"),
        ("one-hot-argmax", "no-graph"),
    ],
)
@pytest.mark.parametrize("lr", [1e-5, 10.0])
@pytest.mark.parametrize("seed", SEEDS)
def test_each_bug_is_named_at_either_end_of_the_rate(
    bug: str, expected: str, lr: float, seed: int
) -> None:
    assert run_drill(SLUG, {"bug": bug, "lr": lr, "steps": 10}, seed)["observed"] == expected


def test_every_bug_sees_the_same_data() -> None:
    digests = {run(bug)["inputs"]["sha256"] for bug in EXPECTED}
    assert len(digests) == 1


@pytest.mark.parametrize("hidden", [8, 1024])
@pytest.mark.parametrize("bug", sorted(EXPECTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_each_bug_is_named_at_either_end_of_the_width(bug: str, hidden: int, seed: int) -> None:
    assert run_drill(SLUG, {"bug": bug, "hidden": hidden}, seed)["observed"] == EXPECTED[bug]


def test_the_width_leaves_the_data_alone() -> None:
    digests = {
        run_drill(SLUG, {"hidden": hidden, "steps": 10}, 0)["inputs"]["sha256"]
        for hidden in (8, 64, 1024)
    }
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({**WIRED, "initial_loss": 1.4, "max_loss": 1.4, "final_loss": 0.5}, "healthy"),
        ({**WIRED, "initial_loss": 1.4, "max_loss": 1.4, "final_loss": 1.35}, "inconclusive"),
        ({**WIRED, "initial_loss": 1.4, "max_loss": 8.0, "final_loss": 0.5}, "diverges"),
        ({**WIRED, "initial_loss": 1.4, "max_loss": 2.8, "final_loss": 1.4}, "diverges"),
        ({**WIRED, "initial_loss": 1.4, "max_loss": 2.8, "final_loss": 0.5}, "healthy"),
        ({**WIRED, "initial_loss": 1.4, "nonfinite_step": 9}, "diverges"),
        ({"loss_has_grad_fn": False, "frozen": 0, "moved": 0}, "no-graph"),
        ({"loss_has_grad_fn": True, "frozen": 2, "moved": 4}, "frozen"),
        ({"loss_has_grad_fn": True, "frozen": 0, "moved": 0, "grad_finite": 6}, "no-step"),
        ({**WIRED, "stale_grad_steps": 149, "grad_norm_growth": 1.5}, "accumulating"),
        # A growing gradient norm alone is what a blow-up shows too: not read as accumulation.
        ({**WIRED, "grad_norm_growth": 6.0, "initial_loss": 1.4, "max_loss": 900.0}, "diverges"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
