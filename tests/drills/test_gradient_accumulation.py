"""Gradient accumulation against its references: the least-squares gradient in closed form, the
step one big batch takes from the same weights, and the closed-form rate where plain gradient
descent stops converging."""

import functools
from typing import Any

import pytest
import torch
from torch import nn

from drills.catalog.gradient_accumulation.problem import design_matrix, make_problem
from drills.catalog.gradient_accumulation.train import AccumulationConfig, accumulate, flat_grad
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "gradient-accumulation"
drill = get_drill(SLUG)
DEFAULT_LR = AccumulationConfig().lr
EXPECTED = {
    ("divided", 1): "healthy",
    ("divided", 2): "healthy",
    ("divided", 4): "healthy",
    ("divided", 8): "healthy",
    ("summed", 1): "healthy",  # nothing to divide: the very same run as divided
    ("summed", 2): "summed",  # 2 x 0.16 = 0.32, well inside the limit of about 0.8
    ("summed", 4): "summed",  # 0.64: still inside it, and the curve looks as healthy
    ("summed", 8): "summed-diverges",  # 1.28: past it
}


@functools.cache
def run(accumulation: str = "divided", k: int = 8, seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, {"accumulation": accumulation, "micro_batches": k, **knobs}, seed)


def signature(accumulation: str, k: int, seed: int, **knobs: Any) -> dict[str, Any]:
    return run(accumulation, k, seed, **knobs)["signature"]  # type: ignore[no-any-return]


def least_squares_gradient(model: nn.Linear, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d/d(weight, bias) of mean((x·w + b - y)^2) = 2/n · X̃ᵀ(X̃θ - y), in float64."""
    design = design_matrix(x)
    theta = torch.cat([model.weight.detach().double().flatten(), model.bias.detach().double()])
    residual = design @ theta - y.double().flatten()
    return 2.0 * design.T @ residual / len(x)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_accumulated_gradient_against_the_closed_form(k: int, seed: int) -> None:
    # The big batch's gradient written out by hand: divided, accumulation reproduces it to
    # float rounding; summed, it is exactly k times it.
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    data = make_problem(512, 8, 0.1, generator)
    micro = [(data.features[i : i + 16], data.targets[i : i + 16]) for i in range(0, 16 * k, 16)]
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference = least_squares_gradient(model, data.features[: 16 * k], data.targets[: 16 * k])
    for accumulation, times in (("divided", 1), ("summed", k)):
        accumulate(model, optimizer, micro, accumulation)
        difference = flat_grad(model) - times * reference
        assert float(difference.norm() / (times * reference).norm()) < 1e-5, accumulation


@pytest.mark.parametrize("k", [2, 4, 8])
@pytest.mark.parametrize("seed", SEEDS)
def test_divided_the_step_is_the_big_batch_step(k: int, seed: int) -> None:
    sig = signature("divided", k, seed)
    assert sig["micro_batches"] == k and sig["examples_per_step"] == 16 * k
    assert 0.99 <= sig["update_ratio"] <= 1.01  # measured: 1 within 3e-7
    assert sig["grad_relative_diff"] < 1e-5  # measured: 3e-8 to 3e-7
    assert sig["worst_grad_relative_diff"] < 1e-5  # at every step: at most 5e-7
    assert sig["grad_max_abs_diff"] < 1e-5
    assert sig["grad_scale"] == pytest.approx(1.0, abs=1e-5)
    # Every step of the run, not only the first.
    assert all(abs(v - 1.0) < 1e-5 for _, v in run("divided", k, seed)["metrics"]["update_ratio"])


@pytest.mark.parametrize("k", [2, 4, 8])
@pytest.mark.parametrize("seed", SEEDS)
def test_summed_the_step_is_k_big_batch_steps_in_the_same_direction(k: int, seed: int) -> None:
    sig = signature("summed", k, seed)
    assert k * 0.99 <= sig["update_ratio"] <= k * 1.01  # measured: k within 2e-7 relative
    assert sig["grad_scale"] == pytest.approx(k, rel=1e-5)
    assert sig["grad_cosine"] == pytest.approx(1.0, abs=1e-9)  # the direction is right
    assert sig["grad_relative_diff"] == pytest.approx(k - 1, rel=1e-5)
    assert sig["effective_lr"] == pytest.approx(k * DEFAULT_LR, rel=0.01)
    points = run("summed", k, seed)["metrics"]["update_ratio"]
    assert all(abs(v / k - 1.0) < 0.01 for _, v in points)


@pytest.mark.parametrize("seed", SEEDS)
def test_with_one_micro_batch_both_variants_are_the_same_run(seed: int) -> None:
    divided, summed = run("divided", 1, seed), run("summed", 1, seed)
    assert divided["signature"] == summed["signature"]
    assert divided["digest"] == summed["digest"]  # every point of every curve
    assert divided["signature"]["update_ratio"] == 1.0
    assert divided["signature"]["grad_max_abs_diff"] == 0.0
    assert divided["observed"] == summed["observed"] == "healthy"


@pytest.mark.parametrize("seed", SEEDS)
def test_summed_at_k_8_blows_up_where_one_batch_per_step_trains(seed: int) -> None:
    one = signature("summed", 1, seed)
    eight = signature("summed", 8, seed)
    # One batch per step: the training-set loss never rises and falls to near the least-squares
    # minimum (measured: 98.7-99.6% below its start, 6-16% above the minimum: batches of 16).
    assert one["max_loss"] == one["initial_loss"]
    assert one["final_loss"] < 0.02 * one["initial_loss"]
    assert one["final_loss"] < 1.25 * one["best_loss"]
    # Eight, same rate: measured 1.3e20 to 1.6e23 times the first loss within 40 steps.
    assert eight["nonfinite_step"] is not None or eight["max_loss"] > 1e15 * eight["initial_loss"]
    # Divided at the same k and rate, the run trains: the scale, not k, is what blew it up.
    assert signature("divided", 8, seed)["final_loss"] < 0.02 * eight["initial_loss"]
    # The closed form says so before the run: 8 x 0.16 = 1.28 is past 2 / λmax (0.80-0.83);
    # 4 x 0.16 = 0.64 is not.
    assert eight["effective_lr"] > 1.5 * eight["stability_limit"]
    assert signature("summed", 4, seed)["effective_lr"] < 0.9 * eight["stability_limit"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_closed_form_limit_brackets_the_measured_line(seed: int) -> None:
    # Divided at k = 8 (batches of 128 of the 512 examples): a rate a tenth below 2 / λmax
    # trains, one a quarter above it blows up (measured: 1.0x trains on every seed, 1.1x blows
    # up on four, 1.2x on all five).
    limit = signature("divided", 8, seed)["stability_limit"]
    below, above = run("divided", 8, seed, lr=0.9 * limit), run("divided", 8, seed, lr=1.25 * limit)
    assert below["observed"] == "healthy"
    assert above["observed"] == "diverges"


@pytest.mark.parametrize(("accumulation", "k"), list(EXPECTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_variant_on_every_seed(accumulation: str, k: int, seed: int) -> None:
    assert run(accumulation, k, seed)["observed"] == EXPECTED[(accumulation, k)]


@pytest.mark.parametrize(
    ("knobs", "expected"),
    [
        # The smallest rate: the steps still compare exactly, the loss falls 1-3% (divided)
        # or 10-13% (summed at k = 8): too little to say training works.
        ({"accumulation": "divided", "k": 8, "lr": 1e-4}, "inconclusive"),
        ({"accumulation": "summed", "k": 1, "lr": 1e-4}, "inconclusive"),
        ({"accumulation": "summed", "k": 8, "lr": 1e-4}, "summed"),
        # The largest rate: every run blows up; only the step tells the two kinds apart.
        ({"accumulation": "divided", "k": 8, "lr": 10.0}, "diverges"),
        ({"accumulation": "summed", "k": 1, "lr": 10.0}, "diverges"),
        ({"accumulation": "summed", "k": 8, "lr": 10.0}, "summed-diverges"),
        # One step: the loss has not moved yet, the step is measured all the same.
        ({"accumulation": "divided", "k": 8, "steps": 1}, "inconclusive"),
        ({"accumulation": "summed", "k": 8, "steps": 1}, "summed"),
        # The most steps: k = 4 summed stays inside the limit, k = 8 summed blows up on the way.
        ({"accumulation": "divided", "k": 1, "steps": 200}, "healthy"),
        ({"accumulation": "summed", "k": 4, "steps": 200}, "summed"),
        ({"accumulation": "summed", "k": 8, "steps": 200}, "summed-diverges"),
    ],
    ids=lambda value: (
        "-".join(f"{v}" for v in value.values()) if isinstance(value, dict) else value
    ),
)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_verdict_holds_at_the_ends_of_each_knob(
    knobs: dict[str, Any], expected: str, seed: int
) -> None:
    settings = dict(knobs)
    accumulation, k = settings.pop("accumulation"), settings.pop("k")
    assert run(accumulation, k, seed, **settings)["observed"] == expected


def test_every_variant_sees_the_same_data_and_starts_from_the_same_loss() -> None:
    records = [run(accumulation, k) for accumulation, k in EXPECTED]
    assert len({record["inputs"]["sha256"] for record in records}) == 1
    assert len({record["signature"]["initial_loss"] for record in records}) == 1


def test_the_first_step_table_compares_each_parameter() -> None:
    (first,) = run("summed", 4)["diagnostics"]["tables"]
    assert [row[0] for row in first["rows"]] == ["weight", "bias"]
    assert all(row[3] == pytest.approx(4.0, rel=1e-5) for row in first["rows"])


# A step that matches the big batch's, read with the loss numbers that decide the rest.
MATCHES = {"micro_batches": 8, "update_ratio": 1.0, "grad_relative_diff": 1e-7}
SUMMED = {"micro_batches": 8, "update_ratio": 8.0, "grad_relative_diff": 7.0}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({**MATCHES, "initial_loss": 1.8, "max_loss": 1.8, "final_loss": 0.01}, "healthy"),
        ({**MATCHES, "initial_loss": 1.8, "max_loss": 1.8, "final_loss": 1.7}, "inconclusive"),
        ({**MATCHES, "initial_loss": 1.8, "max_loss": 90.0, "final_loss": 50.0}, "diverges"),
        ({**MATCHES, "initial_loss": 1.8, "max_loss": 1.8, "nonfinite_step": 12}, "diverges"),
        # Rose to 3x and fell back: on the line between training and blowing up.
        ({**MATCHES, "initial_loss": 1.8, "max_loss": 5.4, "final_loss": 0.01}, "inconclusive"),
        ({**SUMMED, "initial_loss": 1.8, "max_loss": 1.8, "final_loss": 0.01}, "summed"),
        ({**SUMMED, "initial_loss": 1.8, "max_loss": 1.8, "final_loss": 1.7}, "summed"),
        ({**SUMMED, "initial_loss": 1.8, "max_loss": 1e20, "final_loss": 1e20}, "summed-diverges"),
        ({**SUMMED, "initial_loss": 1.8, "max_loss": 5.4, "final_loss": 0.01}, "inconclusive"),
        # k = 1: summed is divided, the step is the big batch's.
        (
            {"micro_batches": 1, "update_ratio": 1.0, "grad_relative_diff": 0.0}
            | {"initial_loss": 1.8, "max_loss": 1.8, "final_loss": 0.01},
            "healthy",
        ),
        # A step that is neither the big batch's nor k times it.
        ({**MATCHES, "update_ratio": 3.0, "initial_loss": 1.8, "final_loss": 0.01}, "inconclusive"),
        # The ratio matches but the gradients do not: not the big batch's gradient.
        (
            {**MATCHES, "grad_relative_diff": 0.3, "initial_loss": 1.8, "final_loss": 0.01},
            "inconclusive",
        ),
        ({}, "inconclusive"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
