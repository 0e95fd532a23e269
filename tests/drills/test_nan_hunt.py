import functools
import json
import math
from typing import Any

import pytest
import torch

from drills.catalog.nan_hunt import CAUSES
from drills.catalog.nan_hunt.numerics import LOG_UNDERFLOW_GAP
from drills.catalog.nan_hunt.setup import (
    NanHuntConfig,
    make_batch,
    mean_over_sequences_masked_after,
    mean_over_tokens,
    token_nll,
)
from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "nan-hunt"
drill = get_drill(SLUG)


@functools.cache
def run(cause: str = "none", seed: int = 0) -> dict[str, Any]:
    return run_drill(SLUG, {"cause": cause}, seed)


def signature(cause: str = "none", seed: int = 0) -> dict[str, Any]:
    return run(cause, seed)["signature"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_clean_run_finds_nothing_and_learns(seed: int) -> None:
    record = run("none", seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["first_nonfinite_stage"] is None and sig["first_nonfinite_step"] is None
    assert sig["steps_completed"] == 150
    assert sig["final_loss"] < 0.5 * sig["initial_loss"]
    assert sig["final_loss"] < 0.5
    assert sig["weight_growth"] < 3
    # The stable log-softmax copes with the same large logits that break the manual one.
    assert sig["max_logit_gap"] > LOG_UNDERFLOW_GAP
    assert record["observed"] == "clean"


@pytest.mark.parametrize("seed", SEEDS)
def test_manual_log_softmax_goes_infinite_in_the_forward_pass(seed: int) -> None:
    record = run("manual-log-softmax", seed)
    sig = record["signature"]
    assert sig["first_nonfinite_stage"] == "activation"
    assert sig["first_nonfinite_name"] == "log_probs"
    assert sig["first_nonfinite_kind"] == "inf"
    assert 10 <= sig["first_nonfinite_step"] < 150  # after the logits have grown
    assert sig["max_logit_gap"] >= sig["log_underflow_gap"]
    assert sig["weight_growth"] < 3  # ordinary weights: not a divergence
    assert sig["final_loss"] is None
    assert record["observed"] == "forward-op"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_batch_without_tokens_breaks_the_loss(seed: int) -> None:
    record = run("zero-token-denominator", seed)
    sig = record["signature"]
    assert (sig["first_nonfinite_stage"], sig["first_nonfinite_name"]) == ("loss", "loss")
    assert sig["first_nonfinite_kind"] == "nan"
    assert sig["first_nonfinite_step"] == sig["unusual_batch_step"] == 40
    assert record["inputs"]["batches"]["40"]["real_tokens"] == 0
    assert record["observed"] == "loss-arithmetic"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_nan_in_the_data_is_caught_before_the_model_runs(seed: int) -> None:
    record = run("nan-in-data", seed)
    sig = record["signature"]
    assert (sig["first_nonfinite_stage"], sig["first_nonfinite_name"]) == ("data", "features")
    assert sig["first_nonfinite_step"] == 40
    assert (sig["nonfinite_elements"], sig["tensor_elements"]) == (1, 8 * 12 * 8)
    assert record["inputs"]["batches"]["40"]["nan_at"] == [[1, 0, 3]]
    assert record["observed"] == "bad-data"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_huge_learning_rate_overflows_after_a_few_steps(seed: int) -> None:
    record = run("huge-lr", seed)
    sig = record["signature"]
    assert sig["first_nonfinite_stage"] in ("activation", "loss", "gradient", "parameter")
    assert sig["first_nonfinite_step"] >= 2
    assert sig["weight_growth"] > 1e6  # the weights exploded before anything overflowed
    losses = [value for _, value in record["metrics"]["loss"]]
    assert len(losses) == sig["first_nonfinite_step"] and losses[-1] > 100 * losses[0]
    assert record["observed"] == "diverged"


@pytest.mark.parametrize("seed", SEEDS)
def test_masking_after_the_invalid_op_poisons_only_the_gradients(seed: int) -> None:
    record = run("mask-after-invalid", seed)
    sig = record["signature"]
    assert sig["first_nonfinite_stage"] == "gradient"
    assert sig["first_nonfinite_name"].startswith("head.")  # nearest the loss first
    assert sig["first_nonfinite_kind"] == "nan"
    assert sig["first_nonfinite_step"] == 40  # the batch with an empty sequence
    assert math.isfinite(sig["loss_at_finding"])  # the forward value was fine
    assert [step for step, _ in record["metrics"]["loss"]][-1] == 40
    rows = record["diagnostics"]["parameters"]
    assert all(row["grad"] == "nonfinite" for row in rows)
    assert record["observed"] == "backward-only"


def test_the_empty_sequence_is_harmless_to_the_clean_loss() -> None:
    batch = run("none")["inputs"]["batches"]["40"]
    assert batch["lengths"][0] == 0 and batch["real_tokens"] > 0


def test_the_finding_table_walks_the_stages_in_order() -> None:
    tables = run("mask-after-invalid")["diagnostics"]["tables"]
    (found,) = tables
    assert found["key"] == "first-nonfinite"
    stages = [row[0] for row in found["rows"]]
    assert stages == ["data", "activation", "loss", "gradient", "parameter"]
    results = [row[2] for row in found["rows"]]
    assert results[0].startswith("finite") and results[2].startswith("finite")
    assert results[3].startswith("FIRST NON-FINITE at step 40")
    assert "not checked at step 40" in results[4]
    clean = run("none")["diagnostics"]["tables"][0]
    assert all(row[2] == "finite on all 150 steps" for row in clean["rows"])
    assert run("none")["diagnostics"]["finding"] is None
    assert run("nan-in-data")["diagnostics"]["finding"]["name"] == "features"


@pytest.mark.parametrize("cause", CAUSES)
def test_every_run_reports_the_same_signature_keys_and_finite_metrics(cause: str) -> None:
    record = run(cause)
    assert set(record["signature"]) == set(signature("none"))
    json.dumps(record, allow_nan=False)
    charted = {metric for chart in drill.charts for metric in chart.metrics}
    assert set(record["metrics"]) <= charted
    assert all(math.isfinite(v) for points in record["metrics"].values() for _, v in points)


def test_every_cause_sees_the_same_stream_until_it_spoils_it() -> None:
    digests = {cause: run(cause)["inputs"]["batches"]["0"]["sha256"] for cause in CAUSES}
    assert len(set(digests.values())) == 1
    at_40 = {cause: run(cause)["inputs"]["batches"]["40"]["sha256"] for cause in CAUSES}
    assert at_40["none"] == at_40["huge-lr"] == at_40["mask-after-invalid"]
    assert len({at_40["none"], at_40["nan-in-data"], at_40["zero-token-denominator"]}) == 3


def test_bad_cause_is_rejected_by_name() -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, {"cause": "cosmic-ray"})
    assert caught.value.knob == "cause"
    with pytest.raises(KnobError):
        resolve_knobs(drill, {"lr": "1"})


# The loss code, written a second time as plain loops over tokens.


def masked_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(5)
    log_probs = torch.randn(3, 5, 4, generator=generator).log_softmax(dim=-1)
    labels = torch.randint(0, 4, (3, 5), generator=generator)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.bool)
    return log_probs, labels, mask


def test_token_nll_and_the_token_mean_match_a_loop() -> None:
    log_probs, labels, mask = masked_batch()
    nll = token_nll(log_probs, labels)
    total, count = 0.0, 0
    for s in range(3):
        for t in range(5):
            assert float(nll[s, t]) == pytest.approx(-float(log_probs[s, t, labels[s, t]]))
            if mask[s, t]:
                total, count = total - float(log_probs[s, t, labels[s, t]]), count + 1
    assert float(mean_over_tokens(nll, mask)) == pytest.approx(total / count, rel=1e-6)


def test_the_sequence_mean_matches_a_loop_and_differs_from_the_token_mean() -> None:
    log_probs, labels, mask = masked_batch()
    nll = token_nll(log_probs, labels)
    means = []
    for s in range(3):
        values = [float(nll[s, t]) for t in range(5) if mask[s, t]]
        means.append(sum(values) / len(values))
    expected = sum(means) / len(means)
    assert float(mean_over_sequences_masked_after(nll, mask)) == pytest.approx(expected, rel=1e-6)
    assert float(mean_over_tokens(nll, mask)) != pytest.approx(expected, rel=1e-3)


def test_an_empty_sequence_gives_a_finite_loss_and_nan_gradients() -> None:
    log_probs, labels, mask = masked_batch()
    mask[2] = False  # the third sequence is empty
    leaf = log_probs.clone().requires_grad_(True)
    loss = mean_over_sequences_masked_after(token_nll(leaf, labels), mask)
    assert bool(torch.isfinite(loss))
    loss.backward()  # type: ignore[no-untyped-call]
    assert leaf.grad is not None
    # NaN reaches the log-probability of every label in the empty sequence, nothing else.
    assert bool(torch.isnan(leaf.grad[2]).any(dim=-1).all())
    assert bool(torch.isfinite(leaf.grad[:2]).all())
    # The same batch through the token mean has clean gradients.
    leaf.grad = None
    mean_over_tokens(token_nll(leaf, labels), mask).backward()  # type: ignore[no-untyped-call]
    assert leaf.grad is not None
    assert bool(torch.isfinite(leaf.grad).all())


def test_make_batch_pads_with_zeros_and_labels_follow_the_teacher() -> None:
    config = NanHuntConfig()
    generator = torch.Generator().manual_seed(0)
    teacher = torch.randn(config.features, config.classes, generator=generator)
    batch = make_batch(config, generator, teacher, step=0)
    for s in range(config.sequences):
        length = int(batch.mask[s].sum())
        assert config.min_length <= length <= config.length
        assert bool(batch.mask[s, :length].all()) and not bool(batch.mask[s, length:].any())
        assert bool((batch.features[s, length:] == 0).all())
        for t in range(length):
            assert int(batch.labels[s, t]) == int((batch.features[s, t] @ teacher).argmax())


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"first_nonfinite_stage": None}, "clean"),
        ({"first_nonfinite_stage": "data", "weight_growth": 1.2}, "bad-data"),
        ({"first_nonfinite_stage": "activation", "weight_growth": 1.5}, "forward-op"),
        ({"first_nonfinite_stage": "loss", "weight_growth": 1.5}, "loss-arithmetic"),
        ({"first_nonfinite_stage": "gradient", "weight_growth": 1.5}, "backward-only"),
        ({"first_nonfinite_stage": "parameter", "weight_growth": 1.5}, "diverged"),
        ({"first_nonfinite_stage": "activation", "weight_growth": 1e18}, "diverged"),
        ({"first_nonfinite_stage": "loss", "weight_growth": 50.0}, "diverged"),
    ],
)
def test_diagnose_reads_the_finding(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_every_diagnosis_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    observed = {run(cause)["observed"] for cause in CAUSES}
    assert observed == keys  # each cause shows a different outcome
    assert run("none")["observed"] == drill.healthy  # the fixed side of a failed/fixed pair


CAUSE_VERDICTS = {
    "none": "clean",
    "manual-log-softmax": "forward-op",
    "zero-token-denominator": "loss-arithmetic",
    "nan-in-data": "bad-data",
    "huge-lr": "diverged",  # weights ~1e18 times their start, against at most 2x for the rest
    "mask-after-invalid": "backward-only",
}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("cause", "expected"), CAUSE_VERDICTS.items())
def test_each_cause_gives_its_verdict_on_every_seed(cause: str, expected: str, seed: int) -> None:
    assert run(cause, seed)["observed"] == expected


def test_every_hypothesis_is_some_causes_verdict() -> None:
    assert set(CAUSE_VERDICTS.values()) == {h.key for h in drill.hypotheses}


def test_references_belong_to_the_verdicts_they_describe() -> None:
    # Step 40 is the unusual batch's step: no expectation for a run that underflows at step 55.
    observations = {item.key: item for item in drill.observations}
    step = observations["first_nonfinite_step"]
    assert step.reference == "unusual_batch_step"
    assert "forward-op" not in step.reference_for and "diverged" not in step.reference_for
    for cause in ("zero-token-denominator", "nan-in-data", "mask-after-invalid"):
        assert CAUSE_VERDICTS[cause] in step.reference_for
        assert run(cause)["signature"]["first_nonfinite_step"] == 40
    assert observations["max_logit_gap"].reference_for == ("forward-op",)


@pytest.mark.parametrize("cause", ["zero-token-denominator", "nan-in-data", "mask-after-invalid"])
def test_the_unusual_batch_strikes_at_its_step(cause: str) -> None:
    record = run_drill(SLUG, {"cause": cause, "unusual_step": 90}, 0)
    sig = record["signature"]
    assert sig["first_nonfinite_step"] == sig["unusual_batch_step"] == 90
    assert record["observed"] == run(cause, 0)["observed"]  # the same verdict as at step 40
