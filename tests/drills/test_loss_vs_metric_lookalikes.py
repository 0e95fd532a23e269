"""The look-alikes the drill's cases stand on, from real runs: a rare class set apart that
scores near the majority share by merit, inputs cut short, a learning rate far too small."""

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
