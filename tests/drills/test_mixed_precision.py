"""Mixed precision against its references: a float32 twin taking the same step from the same
weights, the closed form of a step clipped before the unscale (the right step divided by the
scale), and a loss-scaling loop written out by hand that follows GradScaler's rule (skip on inf
and halve, otherwise divide by the scale and step)."""

import copy
import functools
import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from drills.catalog.mixed_precision.problem import make_problem
from drills.catalog.mixed_precision.train import (
    MixedPrecisionConfig,
    batches,
    make_model,
    mixed_precision_step,
)
from drills.catalog.mixed_precision.twin import flat_weights, stepped
from drills.core.registry import get_drill
from drills.kit.run import Run
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "mixed-precision"
drill = get_drill(SLUG)
EXPECTED = {
    (): "healthy",
    (("precision", "float32"),): "healthy",
    (("unscale", "late"),): "clipped-scaled",
    (("clip", "off"),): "healthy",
    (("unscale", "late"), ("clip", "off")): "norm-read-scaled",
    (("precision", "float32"), ("unscale", "late")): "healthy",  # no scale, nothing to unscale
    (("init_scale_power", 16),): "healthy",  # GradScaler's default: nothing skipped here
    (("init_scale_power", 20),): "healthy",  # 4 of 50 steps skipped, then it trains
    (("init_scale_power", 32),): "inconclusive",  # 15-16 of 50: on the line
    (("init_scale_power", 48),): "overflow-skips",  # 32 of 50
    (("init_scale_power", 64),): "overflow-skips",  # 47-48 of 50
}


@functools.cache
def run(seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, knobs, seed)


def signature(seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run(seed, **knobs)["signature"]  # type: ignore[no-any-return]


def points(record: dict[str, Any], metric: str) -> dict[int, float]:
    return dict(record["metrics"].get(metric, []))


class Silent:
    def metric(self, name: str, step: int, value: float) -> None:
        pass


@pytest.mark.parametrize("clip", ["on", "off"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_healthy_step_is_the_float32_step(clip: str, seed: int) -> None:
    record = run(seed, clip=clip)
    sig = record["signature"]
    assert sig["skipped_steps"] == 0 and sig["first_taken_step"] == 0
    assert sig["step_scale"] == sig["initial_scale"] == sig["final_scale"] == 1024.0
    # Measured: clipped, both steps have norm lr and agree within 3e-7; unclipped, float16
    # rounding of the gradient (3e-4 to 5e-4 of its norm) moves the ratio by at most 1.5e-4.
    assert sig["update_ratio"] == pytest.approx(1.0, abs=1e-3)
    assert sig["update_cosine"] > 0.9999
    assert sig["grad_relative_diff"] < 2e-3
    assert sig["norm_ratio"] == pytest.approx(1.0, abs=1e-3)  # the logged norm is the true one
    assert sig["unscaled_grad_norm"] == pytest.approx(sig["scaled_grad_norm"] / 1024, rel=1e-9)
    # At every step of the run, not only the first (measured: within 3e-3).
    assert all(abs(v - 1.0) < 1e-2 for v in points(record, "update_ratio").values())
    # The same loop in float32 ends where this one does (measured: within 0.3%).
    assert sig["final_loss"] == pytest.approx(sig["float32_final_loss"], rel=0.01)
    assert sig["final_loss"] < 0.2 * sig["initial_loss"]  # measured: 88-94% below


@pytest.mark.parametrize("seed", SEEDS)
def test_clipping_before_the_unscale_divides_the_step_by_the_scale(seed: int) -> None:
    record = run(seed, unscale="late")
    sig = record["signature"]
    # The first gradient is longer than max_norm 1 (measured 1.4-2.2): the twin clips it to
    # norm 1, the loop clips the scaled one to norm 1 and then divides it by 1024.
    assert sig["float32_grad_norm"] > 1.0
    assert sig["scaled_clip_ratio"] == 1 / 1024
    assert sig["update_ratio"] == pytest.approx(1 / 1024, rel=1e-4)  # measured: within 5e-5
    assert sig["update_cosine"] > 0.9999  # the right direction, a thousandth of the length
    # The norm the loop logged (what clip_grad_norm_ returned) is the scaled one.
    assert sig["norm_ratio"] == pytest.approx(1024, rel=1e-3)
    assert sig["logged_grad_norm"] == pytest.approx(sig["scaled_grad_norm"], rel=1e-6)
    # Every step: the closed form 1 / (scale x min(1, ||g|| / max_norm)) within 1e-4.
    ratios, norms = points(record, "update_ratio"), points(record, "float32_grad_norm")
    for step, ratio in ratios.items():
        assert ratio * 1024 * min(1.0, norms[step]) == pytest.approx(1.0, rel=1e-4), step
    # Nothing is skipped and the loss barely moves (measured: 1.6-2.3% in 50 steps).
    assert sig["skipped_steps"] == 0
    assert sig["final_loss"] > 0.95 * sig["initial_loss"]
    assert sig["float32_final_loss"] < 0.2 * sig["initial_loss"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_clipped_scaled_step_is_the_right_step_over_the_scale(seed: int) -> None:
    # The two orders from the very same weights and batch, through the drill's own step: the
    # late one's update is the early one's divided by the scale, entry by entry.
    config = MixedPrecisionConfig()
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    data = make_problem(config.examples, config.features, config.noise, generator)
    x, y = data.features[:32], data.targets[:32]
    updates = {}
    for unscale in ("first", "late"):
        torch.manual_seed(seed)
        model = make_model(config)
        optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        before = flat_weights(stepped(optimizer))
        variant = MixedPrecisionConfig(unscale=unscale)
        mixed_precision_step(model, optimizer, scaler, x, y, variant)
        updates[unscale] = flat_weights(stepped(optimizer)) - before
    first, late = updates["first"], updates["late"]
    assert float(first.norm()) == pytest.approx(config.lr, rel=1e-5)  # clipped to norm 1
    # The late step's entries (about 1e-6) are added to weights whose float32 spacing is about
    # 3e-8, so the step read back from the weights carries that rounding: measured 3e-4 to
    # 5e-4 of relative difference; the direction is the same.
    assert float((late * 1024 - first).norm() / first.norm()) < 5e-3
    assert float(late.dot(first) / (late.norm() * first.norm())) > 0.9999


@pytest.mark.parametrize("power", [20, 32, 48, 64])
@pytest.mark.parametrize("seed", SEEDS)
def test_each_skipped_step_leaves_the_weights_and_halves_the_scale(power: int, seed: int) -> None:
    record = run(seed, init_scale_power=power)
    sig = record["signature"]
    skipped = sig["skipped_steps"]
    # Measured: the scaler skips until the scale is down to 2^16 or 2^17, then takes every
    # step (on one seed at 2^20 it takes one at 2^17 and skips the next).
    assert power - skipped in (16, 17)
    assert sig["first_skipped_step"] == 0 and sig["last_skipped_step"] <= skipped
    assert sig["skips_without_halving"] == 0 and sig["halvings_without_skip"] == 0
    # Step by step, from the scaler's own get_scale() and the weights: a step that left every
    # weight as it was halved the scale; a step that moved them kept it.
    scales, counted = points(record, "scale"), points(record, "skipped_steps")
    assert scales[0] == 2.0**power
    for step in range(len(scales) - 1):
        was_skipped = counted[step] > counted.get(step - 1, 0)
        assert scales[step + 1] == scales[step] / (2 if was_skipped else 1), step
    assert sig["final_scale"] == 2.0 ** (power - skipped)
    # Up to the first step that moved a weight, the training-set loss is the very same number.
    untouched, set_losses = sig["first_taken_step"], points(record, "set_loss")
    assert {set_losses[step] for step in range(untouched + 1)} == {sig["initial_loss"]}
    # Meanwhile the loss the loop logs is an ordinary batch loss (measured 0.44-1.44 times the
    # first training-set loss), finite at every step.
    logged = [points(record, "loss")[step] for step in range(untouched)]
    assert all(0.3 * sig["initial_loss"] < value < 2.0 * sig["initial_loss"] for value in logged)
    # Once a step is taken it is the float32 step.
    assert sig["update_ratio"] == pytest.approx(1.0, abs=1e-3)


def reference_scaling_step(
    model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, scale: float, lr: float
) -> tuple[float, bool]:
    """GradScaler's rule written out: backward on loss x scale under autocast, skip and halve if
    any gradient is not finite, else divide by the scale, clip at norm 1 and step with SGD."""
    model.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.float16):
        prediction = model(x)
    (F.mse_loss(prediction.float(), y) * scale).backward()  # type: ignore[no-untyped-call]
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None for g in grads)
    if not all(bool(torch.isfinite(g).all()) for g in grads if g is not None):
        return scale / 2, False
    with torch.no_grad():
        for p in model.parameters():
            assert p.grad is not None
            p.grad.mul_(1.0 / scale)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for p in model.parameters():
            assert p.grad is not None
            p.add_(p.grad, alpha=-lr)
    return scale, True


@pytest.mark.parametrize("seed", [0, 3])
def test_the_scaler_follows_the_written_out_rule(seed: int) -> None:
    # From 2^24: a few skips, then steps. The hand-written loop and GradScaler take the same
    # decisions, and the weights agree to float rounding at every step.
    config = MixedPrecisionConfig(init_scale_power=24, steps=20)
    run_state = Run(seed, Silent())
    data = make_problem(config.examples, config.features, config.noise, run_state.data_rng)
    torch.manual_seed(seed)
    model = make_model(config)
    reference = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24)
    scale, decisions = 2.0**24, []
    for _, (x, y) in zip(range(config.steps), batches(data, config, run_state), strict=False):
        before = flat_weights(stepped(optimizer))
        mixed_precision_step(model, optimizer, scaler, x, y, config)
        moved = not torch.equal(flat_weights(stepped(optimizer)), before)
        scale, taken = reference_scaling_step(reference, x, y, scale, config.lr)
        assert moved == taken
        assert scaler.get_scale() == scale
        difference = flat_weights(stepped(optimizer)) - flat_weights(list(reference.parameters()))
        assert float(difference.abs().max()) < 1e-6
        decisions.append(taken)
    assert decisions[:7] == [False] * 7 and all(decisions[9:])  # 2^24 down to 2^16 or 2^17


@pytest.mark.parametrize("seed", SEEDS)
def test_a_norm_read_before_the_unscale_is_the_scale_times_too_large(seed: int) -> None:
    late, first = signature(seed, unscale="late", clip="off"), signature(seed, clip="off")
    assert late["norm_ratio"] == pytest.approx(1024, rel=1e-3)
    assert first["norm_ratio"] == pytest.approx(1, abs=1e-3)
    # Training itself is untouched: where the norm is read changes no weight.
    for key in ("initial_loss", "final_loss", "update_ratio", "median_update_ratio"):
        assert late[key] == first[key], key


@pytest.mark.parametrize("seed", SEEDS)
def test_in_float32_the_scaler_is_off_and_the_order_does_not_matter(seed: int) -> None:
    first, late = run(seed, precision="float32"), run(seed, precision="float32", unscale="late")
    assert first["signature"] == late["signature"]
    assert first["digest"] == late["digest"]
    sig = first["signature"]
    assert sig["initial_scale"] == sig["final_scale"] == 1.0
    assert sig["update_ratio"] == 1.0 and sig["grad_relative_diff"] == 0.0
    assert sig["final_loss"] == sig["float32_final_loss"]


@pytest.mark.parametrize("knobs", list(EXPECTED), ids=lambda knobs: str(dict(knobs) or "defaults"))
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_variant_on_every_seed(knobs: tuple[Any, ...], seed: int) -> None:
    assert run(seed, **dict(knobs))["observed"] == EXPECTED[knobs]


@pytest.mark.parametrize(
    ("knobs", "expected"),
    [
        # The smallest rate: the steps still compare exactly, the loss falls 8-11%.
        ({"lr": 1e-3}, "inconclusive"),
        ({"lr": 1e-3, "unscale": "late"}, "clipped-scaled"),
        ({"lr": 1e-3, "unscale": "late", "clip": "off"}, "norm-read-scaled"),
        ({"lr": 1e-3, "init_scale_power": 64}, "overflow-skips"),
        # The largest rate: the loss blows up (550-960 times clipped; unclipped it overflows to
        # inf, the scaler skipping on the way), except where every step is cut by the scale.
        ({"lr": 10.0}, "diverges"),
        ({"lr": 10.0, "clip": "off"}, "diverges"),
        ({"lr": 10.0, "unscale": "late", "clip": "off"}, "diverges"),
        ({"lr": 10.0, "precision": "float32"}, "diverges"),
        ({"lr": 10.0, "unscale": "late"}, "clipped-scaled"),
        ({"lr": 10.0, "init_scale_power": 64}, "diverges"),  # 48 skipped, then one huge step
        # One step: the loss has not moved yet; the step is measured all the same.
        ({"steps": 1}, "inconclusive"),
        ({"steps": 1, "unscale": "late"}, "clipped-scaled"),
        ({"steps": 1, "unscale": "late", "clip": "off"}, "norm-read-scaled"),
        ({"steps": 1, "init_scale_power": 20}, "overflow-skips"),
        # The most steps: 47-48 skipped of 200 is on the line; 32 of 200 is the scaler settling.
        ({"steps": 200}, "healthy"),
        ({"steps": 200, "unscale": "late"}, "clipped-scaled"),
        ({"steps": 200, "init_scale_power": 48}, "healthy"),
        ({"steps": 200, "init_scale_power": 64}, "inconclusive"),
    ],
    ids=lambda value: (
        "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
    ),
)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_verdict_holds_at_the_ends_of_each_knob(
    knobs: dict[str, Any], expected: str, seed: int
) -> None:
    assert run(seed, **knobs)["observed"] == expected


def test_every_variant_sees_the_same_data_and_starts_from_the_same_loss() -> None:
    records = [run(0, **dict(knobs)) for knobs in EXPECTED]
    assert len({record["inputs"]["sha256"] for record in records}) == 1
    assert len({record["signature"]["initial_loss"] for record in records}) == 1


def test_the_first_step_table_compares_each_parameter() -> None:
    (first,) = run(0, unscale="late")["diagnostics"]["tables"]
    assert [row[0] for row in first["rows"]] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for _, scaled, unscaled, float32, ratio in first["rows"]:
        assert scaled == pytest.approx(1024 * unscaled)
        assert unscaled == pytest.approx(float32, rel=0.01)
        assert ratio == pytest.approx(1 / 1024, rel=1e-3)


def test_a_run_that_skips_every_step_has_no_step_to_compare() -> None:
    sig = signature(0, init_scale_power=64, steps=40)
    assert sig["skipped_steps"] == 40 and sig["skipped_share"] == 1.0
    assert sig["first_taken_step"] is None and sig["update_ratio"] is None
    assert sig["final_scale"] == 2.0 ** (64 - 40)
    assert sig["final_loss"] == sig["initial_loss"]  # not one weight moved


# A run whose steps match the float32 twin's, read with the numbers that decide the rest.
SAME = {
    "steps_run": 50,
    "skipped_steps": 0,
    "update_ratio": 1.0,
    "scaled_clip_ratio": 1 / 1024,
    "step_scale": 1024.0,
    "norm_ratio": 1.0,
    "initial_loss": 0.8,
    "max_loss": 0.8,
    "final_loss": 0.1,
}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        (SAME, "healthy"),
        ({**SAME, "final_loss": 0.7}, "inconclusive"),  # fell too little
        ({**SAME, "max_loss": 1.6}, "inconclusive"),  # rose 2x on the way: on the line
        ({**SAME, "max_loss": 80.0}, "diverges"),
        ({**SAME, "nonfinite_step": 12}, "diverges"),
        ({**SAME, "skipped_steps": 5}, "healthy"),  # a tenth: the scale settling
        ({**SAME, "skipped_steps": 15}, "inconclusive"),  # 30%: on the line
        ({**SAME, "skipped_steps": 25}, "overflow-skips"),
        ({**SAME, "skipped_steps": 50, "update_ratio": None}, "overflow-skips"),
        ({**SAME, "update_ratio": 1 / 1024, "norm_ratio": 1024.0}, "clipped-scaled"),
        ({**SAME, "norm_ratio": 1024.0}, "norm-read-scaled"),
        ({**SAME, "update_ratio": 0.3}, "inconclusive"),  # neither the twin's nor 1/scale
        ({**SAME, "norm_ratio": 7.0}, "inconclusive"),  # neither 1 nor the scale
        # float32: the scale is 1, and a clipped step equal to the twin's is just right.
        ({**SAME, "step_scale": 1.0, "scaled_clip_ratio": 1.0}, "healthy"),
        ({"steps_run": 0, "skipped_steps": 0}, "inconclusive"),
        ({}, "inconclusive"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_the_drill_uses_float16_autocast_and_a_real_grad_scaler_on_this_cpu() -> None:
    # What the docstring says was measured: float16 matmuls under CPU autocast, and a
    # GradScaler("cpu") that skips a step with inf gradients and halves its scale.
    layer = torch.nn.Linear(4, 1)
    with torch.autocast("cpu", dtype=torch.float16):
        output = layer(torch.ones(2, 4))
    assert output.dtype == torch.float16 and layer.weight.dtype == torch.float32
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**40)
    before = layer.weight.detach().clone()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = layer(torch.ones(2, 4)).float().sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.equal(layer.weight, before)
    assert scaler.get_scale() == 2.0**39
    assert math.isinf(float(layer.weight.grad.abs().max()))  # type: ignore[union-attr]
