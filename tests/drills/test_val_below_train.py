import functools
import math
from typing import Any

import pytest
import torch

from drills.cases.outcomes import nuisance_corners
from drills.catalog.val_below_train.cases import CASE_SET
from drills.catalog.val_below_train.train import cosine_lr, spread
from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "val-below-train"
drill = get_drill(SLUG)


@functools.cache
def run(
    dropout: float = 0.5,
    augment_noise: float = 0.0,
    eval_mode: str = "eval",
    seed: int = 0,
    data: str = "fresh",
    randomness: str = "follows-mode",
) -> dict[str, Any]:
    knobs = {"dropout": dropout, "augment_noise": augment_noise, "eval_mode": eval_mode}
    return run_drill(SLUG, knobs | {"data": data, "randomness": randomness}, seed)


def signature(**kwargs: Any) -> dict[str, Any]:
    return run(**kwargs)["signature"]  # type: ignore[no-any-return]


RANDOMNESS = {"dropout": {"dropout": 0.5}, "augmentation": {"dropout": 0.0, "augment_noise": 0.5}}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("source", sorted(RANDOMNESS))
def test_randomness_in_training_puts_the_logged_loss_above_both_others(
    source: str, seed: int
) -> None:
    record = run(**RANDOMNESS[source], seed=seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    train_eval = sig["train_eval_loss"]
    # Logged while dropout/noise are on: well above the same data re-scored without them...
    assert sig["online_gap"] > 0.25 * train_eval
    # ...while validation, from the same source, sits with the re-scored training loss...
    assert abs(sig["val_gap"]) < 0.12 * train_eval
    # ...and so below the logged training loss: "validation below training".
    assert sig["val_below_online"] > 0.2 * train_eval
    assert record["observed"] == "train-noise"


@pytest.mark.parametrize("seed", SEEDS)
def test_without_randomness_the_three_curves_lie_together(seed: int) -> None:
    record = run(dropout=0.0, augment_noise=0.0, seed=seed)
    sig = record["signature"]
    train_eval = sig["train_eval_loss"]
    assert abs(sig["online_gap"]) < 0.03 * train_eval
    assert abs(sig["val_gap"]) < 0.12 * train_eval
    # The model learns the teacher: it ends near the teacher's own expected loss.
    assert train_eval == pytest.approx(sig["train_noise_floor"], rel=0.15)
    assert sig["val_loss"] == pytest.approx(sig["noise_floor"], rel=0.15)
    assert record["observed"] == "no-gap"


@pytest.mark.parametrize("seed", SEEDS)
def test_dropout_only_changes_the_logged_curve_much(seed: int) -> None:
    with_dropout, without = signature(seed=seed), signature(dropout=0.0, seed=seed)
    assert with_dropout["online_train_loss"] > without["online_train_loss"] + 0.2
    # Dropout costs this small model some fit, but far less than it adds to the logged loss.
    cost = with_dropout["val_loss"] - without["val_loss"]
    assert 0.0 < cost < 0.5 * with_dropout["online_gap"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("source", sorted(RANDOMNESS))
def test_validating_in_train_mode_makes_validation_high_and_noisy(source: str, seed: int) -> None:
    record = run(**RANDOMNESS[source], eval_mode="train", seed=seed)
    bug, fixed = record["signature"], signature(**RANDOMNESS[source], seed=seed)
    # Higher: validation now pays for dropout/noise, as the logged training loss does.
    assert bug["val_gap"] > 0.3 * bug["train_eval_loss"]
    assert bug["val_loss"] > fixed["val_loss"] + 0.1
    assert bug["val_loss"] == pytest.approx(bug["online_train_loss"], rel=0.1)
    # Noisier: every validation pass draws new masks, so it wobbles from epoch to epoch.
    assert bug["val_spread"] > 3 * bug["train_eval_spread"]
    assert bug["val_spread"] > 3 * fixed["val_spread"]
    # The training itself is hardly affected (the extra masks only shift the random stream).
    assert bug["train_eval_loss"] == pytest.approx(fixed["train_eval_loss"], rel=0.05)
    assert record["observed"] == "val-in-train-mode"


def test_train_mode_validation_without_randomness_changes_nothing() -> None:
    bug, fixed = signature(dropout=0.0, eval_mode="train"), signature(dropout=0.0)
    assert bug == fixed  # nothing random to switch off: the two modes agree exactly


@pytest.mark.parametrize("seed", SEEDS)
def test_extreme_dropout_leaves_every_curve_near_chance(seed: int) -> None:
    record = run(dropout=0.9, seed=seed)
    sig = record["signature"]
    assert sig["learned_share"] < 0.25
    assert sig["train_eval_loss"] > 0.8 * math.log(4)
    assert abs(sig["val_gap"]) < 0.05 * sig["train_eval_loss"]
    assert record["observed"] == "underfit"


@pytest.mark.parametrize("seed", SEEDS)
def test_learned_share_places_the_fit_between_guessing_and_the_teacher(seed: int) -> None:
    sig = signature(dropout=0.0, seed=seed)
    expected = (math.log(4) - sig["train_eval_loss"]) / (math.log(4) - sig["train_noise_floor"])
    assert sig["learned_share"] == pytest.approx(expected)
    assert 0.9 < sig["learned_share"] < 1.1


def test_every_run_reports_the_same_signature_keys() -> None:
    keys = set(signature())
    assert set(signature(dropout=0.0)) == keys
    assert set(signature(eval_mode="train")) == keys
    assert signature()["chance_loss"] == pytest.approx(math.log(4))


def test_metrics_match_the_charts_with_one_point_per_epoch() -> None:
    record = run()
    charted = {metric for chart in drill.charts for metric in chart.metrics}
    assert set(record["metrics"]) == charted
    assert all(len(points) == 20 for points in record["metrics"].values())
    assert [step for step, _ in record["metrics"]["val"]] == list(range(1, 21))


def test_diagnostics_hold_the_audit_and_the_tables() -> None:
    diagnostics = run(eval_mode="train")["diagnostics"]
    assert all(
        row["grad"] == "finite" and row["update_norm"] > 0 for row in diagnostics["parameters"]
    )
    tables = {t["key"]: t for t in diagnostics["tables"]}
    measured = {row[0]: row for row in tables["measurements"]["rows"]}
    assert measured["val"][2] == "train" and measured["train_eval"][2] == "eval"
    assert len(tables["last_epochs"]["rows"]) == 8
    assert tables["last_epochs"]["rows"][-1][0] == 20


def test_every_knob_setting_sees_the_same_data() -> None:
    digests = {run(**knobs)["inputs"]["sha256"] for knobs in ({}, {"dropout": 0.0})}
    assert len(digests) == 1
    assert run(seed=1)["inputs"]["sha256"] not in digests
    assert run()["inputs"]["shapes"] == {"train_features": [8192, 8], "val_features": [2048, 8]}


@pytest.mark.parametrize(
    ("knob", "value"),
    [
        ("dropout", 0.95),
        ("dropout", -0.1),
        ("augment_noise", 1.5),
        ("eval_mode", "test"),
        ("randomness", "sometimes"),
    ],
)
def test_bad_knob_values_are_rejected_by_name(knob: str, value: object) -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, {knob: value})
    assert caught.value.knob == knob


def test_spread_ignores_a_steady_trend_and_measures_the_wobble() -> None:
    assert spread([1.0, 0.9, 0.8, 0.7, 0.6]) == pytest.approx(0.0, abs=1e-12)
    wobble = [1.0 - 0.1 * i + (0.02 if i % 2 else -0.02) for i in range(8)]
    assert 0.01 < spread(wobble) <= 0.02
    assert spread([0.5, 0.7]) == 0.0  # too few points to separate trend from wobble


def test_spread_matches_a_least_squares_fit() -> None:
    values = [0.52, 0.49, 0.515, 0.47, 0.48, 0.455, 0.47, 0.44]
    x = torch.arange(len(values), dtype=torch.float64)
    design = torch.stack([torch.ones_like(x), x], dim=1)
    y = torch.tensor(values, dtype=torch.float64)[:, None]
    coefficients = torch.linalg.lstsq(design, y).solution
    residuals = (y - design @ coefficients).squeeze(1)
    assert spread(values) == pytest.approx(float(residuals.pow(2).mean().sqrt()), rel=1e-9)


def test_cosine_lr_decays_from_peak_to_zero() -> None:
    assert cosine_lr(3e-3, 0, 100) == pytest.approx(3e-3)
    assert cosine_lr(3e-3, 50, 100) == pytest.approx(1.5e-3)
    assert cosine_lr(3e-3, 100, 100) == pytest.approx(0.0, abs=1e-18)


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"online_train_loss": 0.7, "train_eval_loss": 0.42, "val_loss": 0.43}, "train-noise"),
        ({"online_train_loss": 0.31, "train_eval_loss": 0.31, "val_loss": 0.32}, "no-gap"),
        (
            {
                "online_train_loss": 0.7,
                "train_eval_loss": 0.42,
                "val_loss": 0.69,
                "val_spread": 0.01,
                "train_eval_spread": 0.001,
            },
            "val-in-train-mode",
        ),
        (
            {
                "online_train_loss": 0.31,
                "train_eval_loss": 0.3,
                "val_loss": 0.5,
                "val_spread": 0.0004,
                "train_eval_spread": 0.0003,
            },
            "overfits",
        ),
        ({"online_train_loss": 0.7, "train_eval_loss": 0.42, "val_loss": 0.2}, "val-easier"),
        (
            {
                "online_train_loss": 1.35,
                "train_eval_loss": 1.17,
                "val_loss": 1.17,
                "learned_share": 0.2,
            },
            "underfit",
        ),
        (
            {
                "online_train_loss": 1.0,
                "train_eval_loss": 0.75,
                "val_loss": 0.75,
                "learned_share": 0.6,
            },
            "train-noise",
        ),
        ({"online_train_loss": None, "train_eval_loss": None, "val_loss": None}, "underfit"),
        # A lift beyond the weights' drift but under the band: something random, too little.
        ({"online_train_loss": 0.35, "train_eval_loss": 0.32, "val_loss": 0.31}, "inconclusive"),
        # A lift over the band, but validation level with the logged loss.
        ({"online_train_loss": 0.38, "train_eval_loss": 0.32, "val_loss": 0.36}, "inconclusive"),
        # Validation wobbling with a small lift: validated in train mode, not memorising.
        (
            {
                "online_train_loss": 0.37,
                "train_eval_loss": 0.33,
                "val_loss": 0.385,
                "val_spread": 0.0034,
                "train_eval_spread": 0.0001,
            },
            "inconclusive",
        ),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_a_small_dropout_is_not_read_as_nothing_random() -> None:
    # Issue 27: dropout 0.05 lifted the logged loss by 12%, under the 15% band, and the verdict
    # said "nothing random is switched on". The lift is twenty times the drift of the weights
    # within an epoch, so something random is measurably on; too little to call it the reason.
    record = run(dropout=0.05)
    lift, drift = record["signature"]["online_gap"], signature(dropout=0.0)["online_gap"]
    assert lift > 20 * drift
    assert record["observed"] == "inconclusive"


def test_every_diagnosis_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    for knobs in ({}, {"dropout": 0.0}, {"eval_mode": "train"}, {"dropout": 0.9}):
        assert run(**knobs)["observed"] in keys


# Every variant, and the settings nearest each line diagnose() draws (the online gap near 15% of
# the re-scored loss at dropout 0.05-0.1, validated in either mode; the learned share near a
# third at dropout 0.8-0.9),
# gives one verdict on all five seeds. These settings also show that every hypothesis is the
# verdict of some knob setting.
VERDICTS = [
    ({}, "train-noise"),
    ({"eval_mode": "train"}, "val-in-train-mode"),
    ({"data": "easy-val"}, "val-easier"),
    ({"data": "small-train"}, "overfits"),
    ({"data": "small-train", "dropout": 0.0}, "overfits"),
    # The milder look-alikes the cases use, at both ends of their dropout range.
    ({"data": "trimmed-val", "dropout": 0.2}, "val-easier"),
    ({"data": "trimmed-val", "dropout": 0.3}, "val-easier"),
    ({"data": "subset-train", "dropout": 0.2}, "overfits"),
    ({"data": "subset-train", "dropout": 0.3}, "overfits"),
    ({"data": "repeated-rows", "dropout": 0.2}, "overfits"),
    ({"data": "repeated-rows", "dropout": 0.3}, "overfits"),
    ({"data": "repeated-rows", "dropout": 0.0}, "overfits"),
    ({"data": "filtered-val", "dropout": 0.2}, "val-easier"),
    ({"data": "filtered-val", "dropout": 0.3}, "val-easier"),
    ({"dropout": 0.0}, "no-gap"),
    ({"dropout": 0.0, "augment_noise": 0.5}, "train-noise"),
    ({"dropout": 0.05}, "inconclusive"),
    ({"dropout": 0.05, "eval_mode": "train"}, "inconclusive"),
    ({"dropout": 0.1}, "train-noise"),
    ({"dropout": 0.8}, "train-noise"),
    ({"dropout": 0.9}, "underfit"),
    # Dropout or noise built into the model, at the ends of both: eval mode switches nothing off.
    ({"randomness": "built-in"}, "randomness-built-in"),
    ({"randomness": "built-in", "dropout": 0.05}, "randomness-built-in"),
    ({"randomness": "built-in", "dropout": 0.9}, "randomness-built-in"),
    ({"randomness": "built-in", "dropout": 0.0, "augment_noise": 0.5}, "randomness-built-in"),
    ({"randomness": "built-in", "dropout": 0.0}, "no-gap"),  # nothing random to build in
    # Validation cut from the training rows, whatever else the curves would say.
    ({"data": "val-from-train", "dropout": 0.2}, "val-leaks"),
    ({"data": "val-from-train", "dropout": 0.3}, "val-leaks"),
    ({"data": "val-from-train", "dropout": 0.0}, "val-leaks"),
    ({"data": "val-from-train", "dropout": 0.9}, "val-leaks"),
    ({"data": "val-from-train", "eval_mode": "train"}, "val-leaks"),
]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("knobs", "expected"), VERDICTS, ids=str)
def test_the_verdict_holds_across_seeds(knobs: dict[str, Any], expected: str, seed: int) -> None:
    assert run(**knobs, seed=seed)["observed"] == expected


def test_the_charts_count_epochs_along_their_x_axis() -> None:
    """The loop logs once per epoch (20 points), so the axis says epoch, not step."""
    assert {chart.x_label for chart in drill.charts} == {"epoch"}
    assert {chart.x_label for chart in CASE_SET.charts} == {"epoch"}
    assert [point[0] for point in run(seed=0)["metrics"]["val"]] == list(range(1, 21))


def test_every_hypothesis_is_the_verdict_of_some_setting() -> None:
    assert {key for _, key in VERDICTS} == {hypothesis.key for hypothesis in drill.hypotheses}


@pytest.mark.parametrize("seed", SEEDS)
def test_an_easier_validation_set_sits_below_even_the_rescored_training_loss(seed: int) -> None:
    sig = signature(data="easy-val", dropout=0.0, seed=seed)
    assert sig["val_gap"] < -0.4 * sig["train_eval_loss"]
    # Its own floor is lower: the teacher is surer about these examples.
    assert sig["noise_floor"] < 0.6 * sig["train_noise_floor"]
    assert sig["val_loss"] == pytest.approx(sig["noise_floor"], rel=0.5)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_small_training_set_is_memorised(seed: int) -> None:
    sig = signature(data="small-train", dropout=0.0, seed=seed)
    assert sig["train_examples"] == 128
    assert sig["train_eval_loss"] < 0.8 * sig["train_noise_floor"]  # below the teacher: memorised
    assert sig["val_loss"] > sig["noise_floor"] + 0.1


def test_references_are_shown_only_beside_the_runs_they_describe() -> None:
    by_key = {item.key: item for item in drill.observations}
    assert by_key["online_train_loss"].reference_for == ("no-gap",)
    assert "overfits" not in by_key["train_eval_loss"].reference_for
    assert "underfit" not in by_key["train_eval_loss"].reference_for
    assert "val-easier" not in by_key["val_loss"].reference_for
    assert "val-in-train-mode" not in by_key["val_spread"].reference_for


@pytest.mark.parametrize("seed", SEEDS)
def test_a_trimmed_validation_set_is_easier_but_less_so_than_a_confident_one(seed: int) -> None:
    trimmed = signature(data="trimmed-val", dropout=0.2, seed=seed)
    confident = signature(data="easy-val", dropout=0.2, seed=seed)
    assert confident["val_loss"] < trimmed["val_loss"] < 0.85 * trimmed["train_eval_loss"]
    assert trimmed["val_examples"] == 2048


@pytest.mark.parametrize("seed", SEEDS)
def test_a_training_subset_is_fitted_better_than_fresh_data_but_not_by_heart(seed: int) -> None:
    sig = signature(data="subset-train", dropout=0.2, seed=seed)
    assert sig["train_examples"] == 512
    assert sig["val_gap"] > 0.15 * sig["train_eval_loss"]
    assert sig["train_eval_loss"] > 0.5 * sig["train_noise_floor"]  # far from zero


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dropout", [0.2, 0.3])
def test_rows_repeating_the_subset_train_as_the_subset_does(seed: int, dropout: float) -> None:
    """The subset's 512 examples fill all 8,192 rows: the loop shuffles them into the very
    batches it makes of the subset repeated to fill an epoch, so the logged and validation
    curves are equal bit for bit; only the counts differ. (Re-scored, the training set is the
    same examples averaged over 16 copies of each: equal but for rounding.)"""
    repeated_run = run(data="repeated-rows", dropout=dropout, seed=seed)
    subset_run = run(data="subset-train", dropout=dropout, seed=seed)
    for name in ("train_online", "val"):
        assert repeated_run["metrics"][name] == subset_run["metrics"][name], name
    repeated, subset = repeated_run["signature"], subset_run["signature"]
    assert repeated["train_eval_loss"] == pytest.approx(subset["train_eval_loss"], rel=1e-6)
    counts = ("train_examples", "distinct_examples")
    assert [repeated[key] for key in counts] == [8192, 512]
    assert [subset[key] for key in counts] == [512, 512]
    assert [signature(seed=seed)[key] for key in counts] == [8192, 8192]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dropout", [0.2, 0.3])
def test_validation_cut_from_the_training_rows_trains_as_a_fresh_split_does(
    seed: int, dropout: float
) -> None:
    """The same sets and batches as the fresh split, validated on the training table's first
    2,048 rows: the logged curve is equal bit for bit, and a model that learned from 8,192
    examples scores its own rows about as it scores new ones. Only the search for shared
    examples tells them apart."""
    copied = run(data="val-from-train", dropout=dropout, seed=seed)
    fresh = run(dropout=dropout, seed=seed)
    assert copied["metrics"]["train_online"] == fresh["metrics"]["train_online"]
    assert copied["signature"]["val_loss"] == pytest.approx(fresh["signature"]["val_loss"], rel=0.1)
    found = ("duplicates_found", "val_examples")
    assert [copied["signature"][key] for key in found] == [2048, 2048]
    assert [fresh["signature"][key] for key in found] == [0, 2048]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_loader_that_filters_validation_trains_as_a_trimmed_file_does(seed: int) -> None:
    """The very set trimmed-val stores, trimmed on the way in: the curves are equal bit for bit,
    and only the file's rows against the loader's tell them apart."""
    filtered = run(data="filtered-val", dropout=0.2, seed=seed)
    trimmed = run(data="trimmed-val", dropout=0.2, seed=seed)
    assert filtered["metrics"] == trimmed["metrics"]
    rows = ("val_file_rows", "val_examples")
    assert [trimmed["signature"][key] for key in rows] == [2048, 2048]
    # Drawn in pools of 8,192 until 2,048 sure ones are found: one pool on these seeds.
    assert [filtered["signature"][key] for key in rows] == [8192, 2048]
    assert [signature(seed=seed)[key] for key in rows] == [2048, 2048]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("source", sorted(RANDOMNESS))
def test_randomness_built_into_the_model_trains_as_validation_in_train_mode(
    source: str, seed: int
) -> None:
    """Dropout and noise that ignore eval mode draw the same masks in the same order as a loop
    that validates in train mode (measurements draw from a copy of the generator): the logged
    and validation curves are equal bit for bit. The re-scored training loss, which neither
    chart of a case shows, and two eval-mode passes tell them apart."""
    knobs = RANDOMNESS[source]
    built_in = run(**knobs, randomness="built-in", seed=seed)
    train_mode = run(**knobs, eval_mode="train", seed=seed)
    for name in ("train_online", "val"):
        assert built_in["metrics"][name] == train_mode["metrics"][name], name
    assert (
        built_in["signature"]["eval_repeatable"],
        train_mode["signature"]["eval_repeatable"],
    ) == (
        False,
        True,
    )
    # Re-scored with the randomness on, training sits with the logged curve.
    lifted = built_in["signature"]["train_eval_loss"] - train_mode["signature"]["train_eval_loss"]
    assert lifted > 0.1 * train_mode["signature"]["train_eval_loss"]
    tables = {table["key"]: table for table in built_in["diagnostics"]["tables"]}
    measured = {row[0]: row for row in tables["measurements"]["rows"]}
    assert measured["train_eval"][3] is (source == "dropout")
    assert measured["val"][4] == ("none" if source == "dropout" else "noise std 0.5")


def test_a_measurement_leaves_the_masks_training_draws_alone() -> None:
    """Validation in train mode draws its masks from a copy of torch's generator, so training
    draws the masks it would draw had validation run in eval mode: the logged curves are equal
    bit for bit, and only validation differs."""
    in_train_mode = run(dropout=0.3, eval_mode="train")
    in_eval_mode = run(dropout=0.3)
    assert in_train_mode["metrics"]["train_online"] == in_eval_mode["metrics"]["train_online"]
    assert in_train_mode["metrics"]["val"] != in_eval_mode["metrics"]["val"]


# Seeds on which a subset of 640 examples read as sound dropout at dropout 0.3, not as fitted
# (4 of 20 random seeds): a case planting this cause marked a right reading wrong there.
SUBSET_STRAYS = (249103477, 922121676, 369140570, 958804057)


@pytest.mark.parametrize("seed", SUBSET_STRAYS)
def test_a_training_subset_reads_as_fitted_at_the_cases_largest_dropout(seed: int) -> None:
    record = run_drill(SLUG, {"data": "subset-train", "dropout": 0.3}, seed)
    assert record["observed"] == "overfits"


# Seeds on which a trimmed validation set read as sound dropout, not as easier: 357712575 at a
# confidence of 0.62 and 0.64, 209193189 at 0.64, 689317830 up to 0.66 (validation only 9-15%
# under the re-scored training loss). A case planting this cause marked a right reading wrong.
TRIMMED_STRAYS = (357712575, 209193189, 689317830)


@pytest.mark.parametrize("corner", nuisance_corners(CASE_SET), ids=str)
@pytest.mark.parametrize("seed", TRIMMED_STRAYS)
def test_a_trimmed_validation_set_reads_as_easier_at_both_ends_of_the_cases_dropout(
    seed: int, corner: dict[str, float]
) -> None:
    trimmed = CASE_SET.cause("easier-validation-split")
    record = run_drill(SLUG, {**CASE_SET.base, **corner, **trimmed.knobs}, seed)
    sig = record["signature"]
    assert sig["train_eval_loss"] - sig["val_loss"] > 0.18 * sig["train_eval_loss"]
    assert record["observed"] == "val-easier"
