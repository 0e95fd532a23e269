"""The look-alikes the drill's cases stand on, from real runs: a rare class set apart that
scores near the majority share by merit, a loader that skips rare rows, inputs cut short, a
learning rate far too small."""

from typing import Any

import pytest

from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "loss-vs-metric"


def run(knobs: dict[str, Any], seed: int) -> dict[str, Any]:
    return run_drill(SLUG, knobs, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_rare_class_set_apart_is_found_at_an_accuracy_near_the_majority_share(
    seed: int,
) -> None:
    """The screening case's healthy look-alike: accuracy a few points from the majority share
    and a loss near a majority vote's, but the model names the rare class and finds about half
    of it."""
    knobs = {"minority_fraction": 0.12, "separation": 2.0, "lr": 0.005}
    sig = run(knobs, seed)["signature"]
    assert sig["majority_share"] == pytest.approx(0.88)
    assert 0.02 < sig["accuracy"] - sig["majority_share"] < 0.06
    assert 0.3 < sig["minority_recall"] < 0.7
    assert 0.03 < sig["predicted_minority_share"] < 0.12
    assert 0.15 < sig["eval_loss"] < 0.25


@pytest.mark.parametrize("seed", SEEDS)
def test_a_loader_that_skips_rare_rows_trains_the_run_of_a_rarer_file(seed: int) -> None:
    """Equal classes in the file, 18 of every 19 rare rows skipped on load: training and
    evaluation see the very rows a file of 5% rare rows gives, step for step. Only the shares
    counted on the rows before and after the loader tell the two apart."""
    skipped = run({"minority_fraction": 0.5, "loader": "drops-incomplete"}, seed)
    rarer = run({"minority_fraction": 0.05}, seed)
    assert skipped["metrics"] == rarer["metrics"]
    differ = {
        key for key, value in skipped["signature"].items() if value != rarer["signature"][key]
    }
    assert differ == {"file_minority_share"}
    assert 0.45 < skipped["signature"]["file_minority_share"] < 0.55
    for record in (skipped, rarer):
        assert 0.03 < record["signature"]["loaded_minority_share"] < 0.07
    assert rarer["signature"]["file_minority_share"] == rarer["signature"]["loaded_minority_share"]
    assert skipped["inputs"]["eval_class_counts"] == [1900, 100]
    assert skipped["inputs"]["eval_file_class_counts"] == [1900, 1900]
    assert rarer["inputs"]["eval_file_class_counts"] == [1900, 100]


def test_a_loader_that_skips_rare_rows_keeps_one_rare_example_to_score() -> None:
    """At the file's rarest share the loader leaves about 1 rare row in 1,900: the evaluation
    set still holds one, so recall is a number, not a division by zero."""
    record = run({"minority_fraction": 0.01, "loader": "drops-incomplete"}, 0)
    assert record["inputs"]["eval_class_counts"] == [1999, 1]
    assert record["signature"]["loaded_minority_share"] < 0.003
    assert record["signature"]["minority_recall"] in (0.0, 1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_letters_cut_from_the_input_stay_at_chance(seed: int) -> None:
    record = run({"task": "exact-match-clean", "input_length": 8}, seed)
    sig = record["signature"]
    positions = next(t for t in record["diagnostics"]["tables"] if t["key"] == "position_accuracy")
    shares = [row[1] for row in positions["rows"]]
    assert len(shares) == 12
    assert min(shares[:8]) > 0.9  # the letters the model sees
    assert max(shares[8:]) < 0.15  # the last four: a guess, 1 in 16
    assert sig["position_accuracy_low"] == min(shares)
    assert sig["position_accuracy_high"] == max(shares)
    assert sig["exact_match"] < 0.01
    assert record["inputs"]["letters_reaching_the_model"] == 8


@pytest.mark.parametrize("seed", SEEDS)
def test_two_answers_per_letter_hurt_every_position_alike(seed: int) -> None:
    sig = run({"task": "exact-match"}, seed)["signature"]
    assert sig["position_accuracy_high"] - sig["position_accuracy_low"] < 0.15


@pytest.mark.parametrize("seed", SEEDS)
def test_a_tiny_learning_rate_moves_the_weights_but_not_the_loss(seed: int) -> None:
    sig = run({"task": "exact-match-clean", "lr": 1e-4}, seed)["signature"]
    assert sig["weight_change"] > 0.05
    assert 1 - sig["eval_loss"] / sig["initial_eval_loss"] < 0.02
    assert sig["exact_match"] == 0.0
