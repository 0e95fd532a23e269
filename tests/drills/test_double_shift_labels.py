import functools
import json
import math
from typing import Any

import pytest

from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "double-shift-labels"
LN2 = math.log(2)
drill = get_drill(SLUG)


def run(
    labels: str = "shift-once", seed: int = 0, steps: int = 150, attention: str = "causal"
) -> dict[str, Any]:
    return cached_run(labels, seed, steps, attention)  # one cache key however it is spelled


@functools.cache
def cached_run(labels: str, seed: int, steps: int, attention: str) -> dict[str, Any]:
    return run_drill(SLUG, {"labels": labels, "steps": steps, "attention": attention}, seed)


def signature(labels: str = "shift-once", seed: int = 0) -> dict[str, Any]:
    return run(labels, seed)["signature"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", SEEDS)
def test_shift_once_settles_at_the_next_token_entropy(seed: int) -> None:
    record = run("shift-once", seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["next_token_entropy"] == pytest.approx(LN2)
    assert LN2 - 0.01 < sig["final_loss"] < LN2 + 0.07
    # Only response letters are counted, so all three losses are the same number.
    assert sig["real_token_loss"] == pytest.approx(sig["final_loss"], rel=1e-5)
    assert sig["response_loss"] == pytest.approx(sig["final_loss"], rel=1e-5)
    assert sig["prompt_share"] == 0 and sig["pad_share"] == 0
    assert sig["initial_loss"] == pytest.approx(sig["chance_loss"], rel=0.15)
    assert record["observed"] == "shifted-once" == drill.healthy


@pytest.mark.parametrize("seed", SEEDS)
def test_shift_twice_settles_at_the_two_step_entropy(seed: int) -> None:
    record = run("shift-twice", seed)
    sig = record["signature"]
    assert LN2 + 0.3 < sig["two_step_entropy"] <= math.log(4) + 1e-9
    assert sig["final_loss"] == pytest.approx(sig["two_step_entropy"], rel=0.07)
    assert sig["final_loss"] > signature("shift-once", seed)["final_loss"] + 0.4
    assert record["observed"] == "two-step"


@pytest.mark.parametrize("seed", SEEDS)
def test_no_shift_copies_the_input(seed: int) -> None:
    record = run("no-shift", seed)
    sig = record["signature"]
    assert sig["final_loss"] < 0.02
    assert sig["labels_equal_inputs"] == 1.0  # every label is the token read at its position
    assert sig["future_influence"] == 0.0  # and the model is causal
    assert record["observed"] == "copies-input"


@pytest.mark.parametrize("seed", range(5))
def test_without_the_causal_mask_the_model_reads_its_label_from_the_future(seed: int) -> None:
    record = run("shift-once", seed, attention="unmasked")
    sig, masked = record["signature"], signature("shift-once", seed)
    assert record["status"] == "ok"
    # The labels are the correct ones, yet the loss collapses like copying...
    assert sig["final_loss"] < 0.1 < LN2 - 0.01 < masked["final_loss"]
    assert sig["response_loss"] < 0.1
    # ...and no number of the labels shows it: only the trained model's probe does.
    assert sig["labels_equal_inputs"] == masked["labels_equal_inputs"] < 0.5
    assert sig["future_influence"] > 1.0
    assert masked["future_influence"] == 0.0
    assert record["observed"] == "sees-future"
    assert run("shift-once", seed)["observed"] == "shifted-once"


def test_without_the_causal_mask_the_pairs_are_still_shifted_once() -> None:
    """The decoded pairs, the evidence that separates the two ways of copying, are those of a
    correct shift: the bug is in the model, not in the labels."""
    unmasked = run("shift-once", attention="unmasked")
    assert unmasked["diagnostics"]["tables"] == run("shift-once")["diagnostics"]["tables"]
    assert unmasked["inputs"] == run("shift-once")["inputs"]


@pytest.mark.parametrize("seed", SEEDS)
def test_counting_padding_hides_an_unchanged_real_token_loss(seed: int) -> None:
    record = run("pad-in-loss", seed)
    sig, clean = record["signature"], signature("shift-once", seed)
    assert 0.25 < sig["pad_share"] < 0.45
    assert sig["final_loss"] < 0.8 * sig["real_token_loss"]
    assert sig["final_loss"] < LN2 - 0.1  # "better than the entropy": impossible on real text
    assert sig["real_token_loss"] == pytest.approx(clean["response_loss"], abs=0.03)
    assert sig["response_loss"] == pytest.approx(sig["real_token_loss"], rel=1e-5)
    assert record["observed"] == "pad-counted"


@pytest.mark.parametrize("seed", SEEDS)
def test_counting_the_prompt_lowers_the_total_but_not_the_response_loss(seed: int) -> None:
    record = run("prompt-in-loss", seed)
    sig, clean = record["signature"], signature("shift-once", seed)
    assert 0.35 < sig["prompt_share"] < 0.55
    assert sig["final_loss"] < 0.65 * sig["response_loss"]
    # Prompt letters are real tokens: nothing separates the two averages.
    assert sig["real_token_loss"] == pytest.approx(sig["final_loss"], rel=1e-5)
    assert sig["response_loss"] == pytest.approx(clean["response_loss"], abs=0.03)
    assert record["observed"] == "prompt-counted"


@pytest.mark.parametrize("seed", SEEDS)
def test_all_masked_is_caught_as_no_valid_targets(seed: int) -> None:
    record = run("all-masked", seed)
    assert record["status"] == "error"
    assert "no valid target tokens" in record["error"]
    assert record["signature"]["targets_counted"] == 0
    assert record["signature"]["raw_loss_finite"] is False
    assert record["metrics"] == {}
    assert record["diagnostics"]["parameters"]
    pairs = record["diagnostics"]["tables"][0]
    assert {row[3] for row in pairs["rows"]} <= {"·ignored·", ""}
    assert record["observed"] == "no-targets"
    json.dumps(record, allow_nan=False)


def test_a_short_run_is_still_falling_and_sits_on_no_floor() -> None:
    record = run("shift-once", 0, steps=10)
    sig = record["signature"]
    assert sig["final_loss"] > 1.0  # near the two-step value by coincidence, on its way down
    assert sig["second_half_drop"] > 0.2
    assert record["observed"] == "not-converged"


@pytest.mark.parametrize("labels", ["shift-once", "shift-twice", "pad-in-loss", "prompt-in-loss"])
def test_a_full_run_has_settled(labels: str) -> None:
    for seed in SEEDS:
        assert signature(labels, seed)["second_half_drop"] < 0.15


def column(record: dict[str, Any], name: str) -> list[Any]:
    pairs = record["diagnostics"]["tables"][0]
    index = pairs["columns"].index(name)
    return [row[index] for row in pairs["rows"] if row[0] != "…"]


def test_decoded_pairs_show_how_far_ahead_the_label_points() -> None:
    once, twice, same = run("shift-once"), run("shift-twice"), run("no-shift")
    inputs, positions = column(once, "input"), column(once, "position")
    # Within the first window (consecutive positions) the label is the input 1, 2 or 0 rows on.
    for i in range(1, 7):
        assert positions[i + 1] == positions[i] + 1
        if column(once, "in loss")[i]:
            assert column(once, "label")[i] == inputs[i + 1]
        if column(twice, "in loss")[i - 1]:
            assert column(twice, "label")[i - 1] == inputs[i + 1]
        if column(same, "in loss")[i]:
            assert column(same, "label")[i] == inputs[i]
    assert "·PAD·" in inputs and "·ignored·" in column(once, "label")
    assert "·PAD·" in column(run("pad-in-loss"), "label")
    assert column(run("prompt-in-loss"), "part")[0] == "prompt"
    assert column(run("prompt-in-loss"), "in loss")[0] is True
    assert column(once, "in loss")[0] is False


def test_every_label_mode_sees_the_same_text() -> None:
    modes = ("shift-once", "shift-twice", "pad-in-loss", "all-masked")
    digests = {run(mode)["inputs"]["sha256"] for mode in modes}
    assert len(digests) == 1
    assert run("shift-once", 1)["inputs"]["sha256"] not in digests


@pytest.mark.parametrize("labels", ["shift-twice", "no-shift", "pad-in-loss", "all-masked"])
def test_every_run_reports_the_same_signature_keys(labels: str) -> None:
    assert set(signature(labels)) == set(signature())


def test_metrics_match_the_charts() -> None:
    record = run()
    # The entropy floors are chart references read from the signature, not per-step series.
    assert set(record["metrics"]) == {"loss", "real_token_loss", "response_loss"}
    (chart,) = drill.charts
    assert [ref.signature_key for ref in chart.references] == [
        "next_token_entropy",
        "two_step_entropy",
    ]
    patterns = [metric for chart in drill.charts for metric in chart.metrics]
    for name in record["metrics"]:
        assert name in patterns or any(
            p.endswith("*") and name.startswith(p[:-1]) for p in patterns
        )
    assert all(len(points) == 150 for points in record["metrics"].values())


def test_parameter_audit_covers_the_transformer() -> None:
    rows = run()["diagnostics"]["parameters"]
    names = [row["name"] for row in rows]
    assert names[0] == "token_embedding.weight" and "head.weight" in names
    assert all(row["grad"] == "finite" and row["update_norm"] > 0 for row in rows)


@pytest.mark.parametrize(
    ("knobs", "name"),
    [
        ({"labels": "shift-thrice"}, "labels"),
        ({"attention": "bidirectional"}, "attention"),
        ({"steps": 5}, "steps"),
        ({"steps": 1.5}, "steps"),
    ],
)
def test_bad_knob_values_are_rejected_by_name(knobs: dict[str, Any], name: str) -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, knobs)
    assert caught.value.knob == name


FLOORS = {"next_token_entropy": LN2, "two_step_entropy": 1.35}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"targets_counted": 0}, "no-targets"),
        ({"final_loss": 0.72, "real_token_loss": 0.72, "response_loss": 0.72}, "shifted-once"),
        ({"final_loss": 1.37, "real_token_loss": 1.37, "response_loss": 1.37}, "two-step"),
        ({"final_loss": 0.01, "real_token_loss": 0.01, "response_loss": 0.01}, "copies-input"),
        (
            {
                "final_loss": 0.01,
                "real_token_loss": 0.01,
                "response_loss": 0.01,
                "labels_equal_inputs": 1.0,
                "future_influence": 0.0,
            },
            "copies-input",
        ),
        (
            {
                "final_loss": 0.02,
                "real_token_loss": 0.02,
                "response_loss": 0.02,
                "labels_equal_inputs": 0.1,
                "future_influence": 9.5,
            },
            "sees-future",
        ),
        (
            {
                "final_loss": 0.72,
                "real_token_loss": 0.72,
                "response_loss": 0.72,
                "labels_equal_inputs": 0.1,
                "future_influence": 9.5,
            },
            "shifted-once",  # a leak the model did not learn to use is not what the loss shows
        ),
        ({"final_loss": 0.48, "real_token_loss": 0.72, "response_loss": 0.72}, "pad-counted"),
        ({"final_loss": 0.40, "real_token_loss": 0.40, "response_loss": 0.72}, "prompt-counted"),
        ({"final_loss": 1.05, "real_token_loss": 1.05, "response_loss": 1.05}, "not-converged"),
        (
            {
                "final_loss": 1.23,
                "real_token_loss": 1.23,
                "response_loss": 1.23,
                "second_half_drop": 0.26,
            },
            "not-converged",
        ),
        (
            {
                "final_loss": 0.72,
                "real_token_loss": 0.72,
                "response_loss": 0.72,
                "second_half_drop": 0.09,
            },
            "shifted-once",
        ),
        ({"final_loss": 3.1, "real_token_loss": 3.1, "response_loss": 3.1}, "not-converged"),
        ({"final_loss": None, "real_token_loss": None, "response_loss": None}, "not-converged"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(FLOORS | numbers, None) == expected


def test_every_diagnosis_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    for labels in ("shift-once", "shift-twice", "no-shift", "pad-in-loss", "all-masked"):
        assert run(labels)["observed"] in keys
    assert run(attention="unmasked")["observed"] in keys


def implied_floors(hypothesis: str, sig: dict[str, Any]) -> dict[str, float]:
    """What the page's "what theory gives under your hypothesis" table sets beside each loss."""
    return {
        item.key: sig[item.reference]
        for item in drill.observations
        if item.reference and hypothesis in item.reference_for
    }


@pytest.mark.parametrize("hypothesis", ["sees-future", "copies-input"])
def test_a_model_that_reads_its_answer_implies_a_loss_near_zero(hypothesis: str) -> None:
    # Issue 27: with the causal mask off the model copies the next token, so the hypothesis
    # implies a loss near 0; the table set ln 2 beside it (and beside copying the input).
    record = run(attention="unmasked") if hypothesis == "sees-future" else run("no-shift")
    sig = record["signature"]
    assert record["observed"] == hypothesis
    implied = implied_floors(hypothesis, sig)
    assert set(implied) == {"final_loss", "real_token_loss", "response_loss"}
    assert all(value == 0.0 for value in implied.values())
    for key, floor in implied.items():
        assert abs(sig[key] - floor) < 0.05  # the run sits on what its hypothesis implies


def test_an_honest_run_implies_the_next_token_entropy() -> None:
    sig = run()["signature"]
    assert set(implied_floors("shifted-once", sig).values()) == {sig["next_token_entropy"]}
    assert set(implied_floors("two-step", sig).values()) == {sig["two_step_entropy"]}
