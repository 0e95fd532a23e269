import functools
from typing import Any

import pytest
import torch

from drills.catalog.gradient_check.masked_mean import (
    masked_mean_loop,
    masked_mean_vectorised,
    padded_rows,
)
from drills.catalog.gradient_check.selu import (
    SCALE,
    check_inputs,
    compare_with_finite_differences,
    hand_written_selu,
    passes_gradcheck,
)
from drills.catalog.gradient_check.variants import BACKWARDS, MASKED_MEANS
from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SLUG = "gradient-check"
SEEDS = range(5)
drill = get_drill(SLUG)


@functools.cache
def run(backward: str = "correct", masked_mean: str = "correct", seed: int = 0) -> dict[str, Any]:
    return run_drill(SLUG, {"backward": backward, "masked_mean": masked_mean}, seed)


def signature(backward: str = "correct", masked_mean: str = "correct", seed: int = 0) -> Any:
    return run(backward, masked_mean, seed)["signature"]


# --- The pieces, checked directly ---------------------------------------------------------------


def test_the_hand_written_forward_is_torchs_selu() -> None:
    x = check_inputs(torch.Generator().manual_seed(0))
    assert torch.allclose(hand_written_selu("correct")(x), torch.selu(x), rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_correct_backward_is_autograds(seed: int) -> None:
    x = check_inputs(torch.Generator().manual_seed(seed)).requires_grad_(True)
    weights = torch.randn(x.shape, dtype=torch.float64)
    (mine,) = torch.autograd.grad((hand_written_selu("correct")(x) * weights).sum(), x)
    (torchs,) = torch.autograd.grad((torch.selu(x) * weights).sum(), x)
    assert torch.allclose(mine, torchs, rtol=1e-12, atol=0)


@pytest.mark.parametrize("variant", BACKWARDS)
def test_gradcheck_passes_only_the_correct_backward(variant: str) -> None:
    x = check_inputs(torch.Generator().manual_seed(0))
    assert passes_gradcheck(hand_written_selu(variant), x) is (variant == "correct")


def test_finite_differences_see_a_slip_only_on_its_branch() -> None:
    x = check_inputs(torch.Generator().manual_seed(0))
    weights = torch.ones_like(x)
    wrong = compare_with_finite_differences(hand_written_selu("missing-scale"), x, weights)
    assert float(wrong.relative_error[x < 0].max()) < 1e-8
    expected = 1 - 1 / SCALE  # returning 1 where λ was due
    assert wrong.relative_error[x > 0].tolist() == pytest.approx(
        [expected] * int((x > 0).sum()), abs=1e-8
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_the_correct_vectorised_mean_equals_the_loop(seed: int) -> None:
    values, lengths = padded_rows(torch.Generator().manual_seed(seed))
    assert masked_mean_vectorised(values, lengths, "correct").tolist() == pytest.approx(
        masked_mean_loop(values, lengths), rel=1e-12
    )
    assert int((lengths == values.shape[1]).sum()) >= 2 and int((lengths < 12).sum()) >= 1


def test_the_two_masking_slips_by_hand() -> None:
    values = torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 9.0, 9.0]], dtype=torch.float64)
    lengths = torch.tensor([4, 2])
    assert masked_mean_loop(values, lengths) == [2.5, 3.0]
    assert masked_mean_vectorised(values, lengths, "correct").tolist() == [2.5, 3.0]
    assert masked_mean_vectorised(values, lengths, "padded-length").tolist() == [2.5, 1.5]
    assert masked_mean_vectorised(values, lengths, "padding-summed").tolist() == [2.5, 12.0]


# --- Runs of the drill, over seeds ----------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_a_correct_backward_agrees_with_finite_differences(seed: int) -> None:
    record = run(seed=seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["elements_checked"] == 48
    assert sig["max_grad_error"] < 1e-3 * sig["grad_tolerance"]
    assert sig["gradcheck_passed"] is True
    # Same start, same data, same gradients: the two training curves coincide.
    assert sig["loss_ratio"] == pytest.approx(1.0, abs=1e-5)
    assert sig["final_loss"] < 0.3 * sig["initial_loss"]  # and they do learn
    assert sig["loop_vs_vectorised_max_diff"] < 1e-12
    assert sig["rows_disagreeing"] == 0 and sig["disagreeing_rows"] == ""
    assert record["observed"] == "correct" == drill.healthy


@pytest.mark.parametrize("seed", SEEDS)
def test_a_missing_scale_shows_in_the_check_but_hardly_in_the_curve(seed: int) -> None:
    record = run("missing-scale", seed=seed)
    sig = record["signature"]
    assert sig["max_grad_error"] == pytest.approx(1 - 1 / SCALE, abs=1e-6)  # about 5%
    assert sig["positive_inputs_error"] == sig["max_grad_error"]
    assert sig["negative_inputs_error"] < 1e-8
    assert sig["worst_input"] > 0
    assert sig["gradcheck_passed"] is False
    assert 0.97 < sig["loss_ratio"] < 1.03  # a 5% slip is invisible in the loss
    assert record["observed"] == "wrong-backward"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_flipped_sign_shows_on_negative_inputs_and_slows_training(seed: int) -> None:
    record = run("flipped-sign", seed=seed)
    sig = record["signature"]
    assert sig["max_grad_error"] == pytest.approx(2.0, abs=1e-6)  # |-g - g| / |g|
    assert sig["negative_inputs_error"] == sig["max_grad_error"]
    assert sig["positive_inputs_error"] < 1e-8
    assert sig["worst_input"] < 0
    assert sig["gradcheck_passed"] is False
    assert sig["loss_ratio"] > 1.15  # part of the network is pushed the wrong way
    assert record["observed"] == "wrong-backward"


def test_the_error_chart_puts_the_slip_on_its_side_of_zero() -> None:
    errors = [value for _, value in run("flipped-sign")["metrics"]["relative_error"]]
    negatives = sum(1 for value in errors if value > 1.0)
    assert errors[:negatives] == pytest.approx([2.0] * negatives, abs=1e-6)
    assert max(errors[negatives:]) < 1e-8  # sorted by x: the positive inputs are all right


@pytest.mark.parametrize("masked_mean", ["padded-length", "padding-summed"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_masking_slip_disagrees_on_padded_rows_only(masked_mean: str, seed: int) -> None:
    record = run(masked_mean=masked_mean, seed=seed)
    sig = record["signature"]
    assert sig["rows_disagreeing"] == sig["padded_rows"] == sig["padded_rows_disagreeing"] >= 1
    assert sig["full_rows_max_diff"] < 1e-12
    assert sig["loop_vs_vectorised_max_diff"] > 0.1
    assert sig["max_grad_error"] < 1e-8  # the backward is not to blame
    rows = record["diagnostics"]["tables"][1]["rows"]
    for _, length, padded, loop, vectorised, _ in rows:
        if not padded:
            assert vectorised == pytest.approx(loop, rel=1e-12)
        elif masked_mean == "padded-length":
            assert vectorised == pytest.approx(loop * length / 12, rel=1e-12)
        else:  # positive padding values summed in
            assert vectorised > loop
    assert record["observed"] == "masking-bug"


def test_both_slips_at_once() -> None:
    assert run("flipped-sign", "padded-length")["observed"] == "both-wrong"


def test_every_variant_sees_the_same_data_and_reports_the_same_keys() -> None:
    records = [run(b) for b in BACKWARDS] + [run(masked_mean=m) for m in MASKED_MEANS]
    assert len({str(record["inputs"]) for record in records}) == 1
    assert len({tuple(record["signature"]) for record in records}) == 1
    assert run(seed=1)["inputs"]["sha256"] != run(seed=0)["inputs"]["sha256"]
    assert run(seed=1)["signature"]["worst_input"] != run(seed=0)["signature"]["worst_input"]


def test_metrics_match_the_charts_and_the_audit_covers_the_mlp() -> None:
    record = run()
    assert set(record["metrics"]) == {
        "relative_error",
        "loss",
        "reference_loss",
        "loop_row_mean",
        "vectorised_row_mean",
    }
    assert len(record["metrics"]["relative_error"]) == 48
    assert len(record["metrics"]["loss"]) == 150
    rows = record["diagnostics"]["parameters"]
    assert [row["name"] for row in rows] == [
        "first.weight",
        "first.bias",
        "second.weight",
        "second.bias",
    ]
    assert all(row["grad"] == "finite" for row in rows)


@pytest.mark.parametrize("backward", BACKWARDS)
def test_a_run_is_quick(backward: str) -> None:
    assert run(backward)["timings"]["compute_s"] < 2.0


@pytest.mark.parametrize(
    ("knobs", "name"),
    [
        ({"backward": "transposed"}, "backward"),
        ({"masked_mean": "wrong"}, "masked_mean"),
        ({"steps": 5}, "steps"),
    ],
)
def test_bad_knob_values_are_rejected_by_name(knobs: dict[str, Any], name: str) -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, knobs)
    assert caught.value.knob == name


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"max_grad_error": 4e-10, "loop_vs_vectorised_max_diff": 0.0}, "correct"),
        ({"max_grad_error": 0.048, "loop_vs_vectorised_max_diff": 0.0}, "wrong-backward"),
        ({"max_grad_error": 2.0, "loop_vs_vectorised_max_diff": 4e-16}, "wrong-backward"),
        ({"max_grad_error": 4e-10, "loop_vs_vectorised_max_diff": 1.2}, "masking-bug"),
        ({"max_grad_error": 2.0, "loop_vs_vectorised_max_diff": 1.2}, "both-wrong"),
        ({"max_grad_error": None, "loop_vs_vectorised_max_diff": 1.2}, "masking-bug"),
        ({}, "correct"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
