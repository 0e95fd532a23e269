import functools
import json
import math
from typing import Any

import pytest
import torch.nn.functional as F

from drills.core import runner
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "overfit-one-batch"
drill = get_drill(SLUG)


@functools.cache
def run(bug: str = "none", seed: int = 0, examples: int = 8, lr: float = 1e-2) -> dict[str, Any]:
    knobs = {"bug": bug, "examples": examples, "lr": lr}
    return run_drill(SLUG, knobs, seed)


def signature(**kwargs: Any) -> dict[str, Any]:
    record = run(**kwargs)
    return record["signature"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", SEEDS)
def test_clean_run_memorises_the_batch(seed: int) -> None:
    record = run("none", seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["final_loss"] < 0.05
    assert sig["final_p_correct"] > 0.95
    assert sig["initial_loss"] == pytest.approx(math.log(4), rel=0.25)
    assert record["observed"] == "fits"


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffled_labels_plateau_at_label_entropy(seed: int) -> None:
    record = run("shuffled-labels", seed)
    sig = record["signature"]
    assert sig["label_entropy"] == pytest.approx(math.log(4))  # 8 examples, 2 per class
    assert sig["final_loss"] == pytest.approx(sig["label_entropy"], rel=0.15)
    assert sig["weight_change"] > 0.1  # the weights moved; the loss could not follow
    assert record["observed"] == "labels-detached"


@pytest.mark.parametrize(("examples", "entropy"), [(2, math.log(2)), (5, 1.3322)])
def test_shuffled_labels_floor_follows_the_label_mix(examples: int, entropy: float) -> None:
    sig = signature(bug="shuffled-labels", examples=examples)
    assert sig["label_entropy"] == pytest.approx(entropy, abs=1e-3)
    assert sig["final_loss"] == pytest.approx(entropy, rel=0.15)


@pytest.mark.parametrize("seed", SEEDS)
def test_broadcast_target_plateaus_at_target_variance(seed: int) -> None:
    record = run("broadcast-target", seed)
    sig = record["signature"]
    assert sig["target_variance"] > 1.0
    assert sig["final_loss"] == pytest.approx(sig["target_variance"], rel=0.15)
    assert sig["label_entropy"] is None
    assert any("target size" in text for text in record["diagnostics"]["torch_warnings"])
    assert record["inputs"]["shapes"]["prediction"] == [8, 1]
    assert record["observed"] == "shape-broadcast"


@pytest.mark.parametrize("seed", SEEDS)
def test_all_padding_ends_with_a_clear_error(seed: int) -> None:
    record = run("all-padding", seed)
    assert record["status"] == "error"
    assert "no supervised targets" in record["error"]
    assert record["signature"]["supervised_targets"] == 0
    assert record["signature"]["raw_loss_finite"] is False
    assert record["metrics"] == {}  # no NaN curve
    assert record["diagnostics"]["parameters"]  # the audit is still there
    assert record["observed"] == "nothing-supervised"


@pytest.mark.parametrize("seed", SEEDS)
def test_randomness_leaves_a_noisy_floor_that_eval_mode_does_not_see(seed: int) -> None:
    noisy, clean = signature(bug="randomness-on", seed=seed), signature(seed=seed)
    assert noisy["final_loss"] > 0.1
    assert noisy["final_loss"] > 5 * clean["final_loss"]
    assert noisy["loss_noise"] > 10 * clean["loss_noise"]
    assert noisy["eval_loss"] < 0.5 * noisy["final_loss"]
    assert run("randomness-on", seed)["observed"] == "randomness"


@pytest.mark.parametrize("bug", ["shuffled-labels", "broadcast-target", "randomness-on"])
def test_one_example_hides_the_bug(bug: str) -> None:
    # A permutation of one label, or the mean of one target, changes nothing: the run fits.
    record = run(bug, examples=1)
    assert record["signature"]["final_loss"] < 0.05
    assert record["observed"] == "fits"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_tiny_learning_rate_barely_moves(seed: int) -> None:
    record = run("none", seed, lr=1e-6)
    sig = record["signature"]
    assert sig["final_loss"] == pytest.approx(sig["initial_loss"], rel=0.05)
    assert record["observed"] == "learning-rate"


@pytest.mark.parametrize("lr", [1.0, 10.0])
@pytest.mark.parametrize("seed", range(5))
def test_a_loss_that_blew_up_is_not_a_fit_even_if_it_ends_near_zero(lr: float, seed: int) -> None:
    # At these rates the loss climbs hundreds to a million times above its start, the weights
    # move hundreds of times their size, and most seeds still end near zero: the verdict must
    # read the whole run, not only its end.
    numbers = signature(seed=seed, lr=lr)
    assert numbers["peak_loss"] > 100 * numbers["initial_loss"]
    assert run(seed=seed, lr=lr)["observed"] == "learning-rate"


@pytest.mark.parametrize("seed", range(5))
def test_a_learning_rate_of_zero_moves_nothing_and_says_so(seed: int) -> None:
    numbers = signature(seed=seed, lr=0.0)
    assert numbers["weight_change"] == 0
    assert numbers["final_loss"] == pytest.approx(numbers["initial_loss"], rel=1e-6)
    assert run(seed=seed, lr=0.0)["observed"] == "learning-rate"


@pytest.mark.parametrize("seed", range(5))
def test_a_good_learning_rate_never_climbs_far_above_its_start(seed: int) -> None:
    numbers = signature(seed=seed)
    assert numbers["peak_loss"] < 1.05 * numbers["initial_loss"]
    assert run(seed=seed)["observed"] == "fits"


def test_a_huge_learning_rate_on_the_regression_runs_away() -> None:
    record = run("broadcast-target", lr=10.0)
    assert record["status"] == "ok"
    assert record["signature"]["final_loss"] > 10 * record["signature"]["target_variance"]
    assert record["observed"] == "learning-rate"


def test_a_nonfinite_loss_stops_training_without_crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Adam rarely overflows this small MLP, so make the loss overflow at step 5.
    calls = {"count": 0}
    real_cross_entropy = F.cross_entropy

    def overflowing_cross_entropy(*args: Any, **kwargs: Any) -> Any:
        calls["count"] += 1
        loss = real_cross_entropy(*args, **kwargs)
        return loss * math.inf if calls["count"] > 5 else loss

    monkeypatch.setattr(F, "cross_entropy", overflowing_cross_entropy)
    record = runner.run_drill(SLUG, {}, 0)  # a run of its own, not the shared clean one
    assert record["status"] == "ok"
    assert record["signature"]["nonfinite_step"] == 5
    assert [step for step, _ in record["metrics"]["loss"]] == [0, 1, 2, 3, 4]
    assert record["observed"] == "learning-rate"
    json.dumps(record, allow_nan=False)


@pytest.mark.parametrize("bug", ["none", "shuffled-labels", "broadcast-target", "all-padding"])
def test_every_run_reports_the_same_signature_keys(bug: str) -> None:
    assert set(signature(bug=bug)) == set(signature())


def test_metrics_match_the_charts() -> None:
    record = run()
    charted = {metric for chart in drill.charts for metric in chart.metrics}
    assert set(record["metrics"]) == charted
    assert all(len(points) == 200 for points in record["metrics"].values())


def test_inputs_describe_the_batch() -> None:
    inputs = run()["inputs"]
    assert inputs["shapes"]["features"] == [8, 16]
    assert inputs["shapes"]["labels"] == [8]
    assert len(inputs["sha256"]) == 64
    first = inputs["examples"][0]
    assert len(first["features_first4"]) == 4
    assert first["label"] in range(4)
    assert run("all-padding")["inputs"]["examples"][0]["target_in_loss"] == -100


def test_every_bug_sees_the_same_batch() -> None:
    digests = {run(bug)["inputs"]["sha256"] for bug in ("none", "shuffled-labels", "all-padding")}
    assert len(digests) == 1
    assert run("none", seed=1)["inputs"]["sha256"] not in digests


def test_parameter_audit_rows_cover_the_model() -> None:
    rows = run()["diagnostics"]["parameters"]
    assert [row["name"] for row in rows][:2] == ["net.0.weight", "net.0.bias"]
    assert all(row["grad"] == "finite" and row["in_optimizer"] for row in rows)
    assert all(row["update_norm"] > 0 for row in rows)


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"supervised_targets": 0}, "nothing-supervised"),
        ({"final_loss": 0.01, "initial_loss": 1.4}, "fits"),
        ({"final_loss": 1.39, "initial_loss": 1.4, "label_entropy": 1.386}, "labels-detached"),
        (
            {
                "final_loss": 1.39,
                "initial_loss": 1.4,
                "weight_change": 0.002,
                "label_entropy": 1.386,
            },
            "learning-rate",
        ),
        ({"final_loss": 4.3, "initial_loss": 12.0, "target_variance": 4.2}, "shape-broadcast"),
        ({"final_loss": 0.3, "initial_loss": 1.4, "eval_loss": 0.01}, "randomness"),
        # Eval mode that does not repeat itself is read before any level of the loss ...
        ({"final_loss": 0.3, "initial_loss": 1.4, "eval_repeatable": False}, "randomness-built-in"),
        ({"final_loss": 0.0, "initial_loss": 1.4, "eval_repeatable": False}, "randomness-built-in"),
        # ... but after a loss that blew up.
        (
            {"final_loss": 0.3, "initial_loss": 1.4, "peak_loss": 30.0, "eval_repeatable": False},
            "learning-rate",
        ),
        ({"final_loss": 0.9, "initial_loss": 1.4, "label_entropy": 1.386}, "learning-rate"),
        ({"final_loss": 50.0, "initial_loss": 1.4}, "learning-rate"),
        ({"final_loss": None, "initial_loss": None, "nonfinite_step": 0}, "learning-rate"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_every_diagnosis_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    for bug in ("none", "shuffled-labels", "broadcast-target", "all-padding", "randomness-on"):
        assert run(bug)["observed"] in keys
