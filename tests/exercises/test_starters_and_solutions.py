"""Every exercise, judged for real on seeds 0-4: its starter fails the checks aimed at its bug
(a write-it starter left blank is an error that says what to write), its solution passes them
all, and the judge's own measurements sit in each exercise's bands."""

import math

import pytest

from drills.catalog.val_below_train.exercises.eval_mode_remeasure.problem import (
    handed_in_train_mode,
)
from drills.exercises.registry import all_exercises
from tests.exercises.judging import SEEDS, numbers, solution, starter, statuses

SLUGS = [exercise.slug for exercise in all_exercises()]

# What each starter's bug must fail (and the checks it must still pass), and the drill's reading.
STARTER_FAILS = {
    "overfit-shuffled-pairs": ({"fits-2", "fits-5"}, "labels-detached"),
    "graph-detached-features": ({"every-layer-learns", "loss-falls"}, "cut-below-head"),
    "labels-shift-once": ({"labels-aligned", "loss-at-entropy"}, "two-step"),
    "eval-mode-remeasure": ({"eval-mode-loss"}, "val-easier"),
    "optimizer-new-head": ({"new-head-learns"}, "head-left-out"),
    "accumulation-big-batch-step": ({"big-batch-step", "trains-to-floor"}, "summed-diverges"),
    "mixed-precision-float32-step": ({"float32-step", "trains"}, "clipped-scaled"),
    # The steps blow the weights up to NaN: no trained weights come back either.
    "per-token-loss": ({"weights", "per-token-step", "trains-to-floor"}, "token-sum"),
    "evaluation-encodes-like-training": ({"same-ids", "scores-like-training"}, "pipeline-mismatch"),
    "group-leakage-honest-split": ({"users-apart", "no-near-copies"}, "both-leak"),
    # log(softmax) on the probe and in the loop: every check, the weights NaN in both runs.
    "nan-hunt-confident-logits": (
        {"weights", "log-probs", "log-probs-gradient", "confident-step", "learns"},
        "forward-op",
    ),
    "padding-both-masks": (
        {"same-padded-or-alone", "loss-over-real-tokens"},
        "pad-attended-and-counted",
    ),
    "loss-spikes-wrong-labels": ({"wrong-labels-out", "no-recurring-spike", "learns"}, "bad-batch"),
    # The rate of 1.0 blows up on both hidden runs: the weights come back NaN.
    "lr-sweep-choose-rate": ({"weights", "stable-rate", "trains"}, "too-aggressive"),
    # Logits in the hundreds: the loss starts at hundreds of times ln(C) and ends near chance
    # or NaN; the gradients still reach every layer and no unit is dead.
    "init-check-sound-start": ({"first-loss", "activations", "learns"}, "too-large"),
    # Slope x below beta (invisible at the self-test's beta = 1) and padded steps given a gradient.
    "gradient-check-smooth-l1-backward": (
        {"gradient-real", "gradient-padding", "learns"},
        "wrong-backward",
    ),
    # Plain cross-entropy at 2% rare: not one rare example found, so a majority vote.
    "loss-vs-metric-rare-class": ({"finds-rare", "balanced-accuracy"}, "majority-vote"),
    # The copies are trained on, and the last of 40 epochs kept: far past the large table's best.
    "overfitting-honest-early-stop": ({"validation-kept-out", "not-overfit"}, "leakage"),
    # The panel drops every gradient before the step: no parameter moves, the loss stays put.
    "silent-no-learning-gradient-panel": (
        {"every-parameter-moves", "own-batch-steps", "loss-falls"},
        "no-step",
    ),
}
# Write-it exercises whose starter is a signature and a docstring: the function to write.
UNWRITTEN = {
    "parameter-audit": "write audit()",
    "relative-update": "write relative_update()",
    "label-audit": "write audit_labels()",
    "batch-noise-spike": "write read_spike()",
    "first-non-finite": "write first_non_finite()",
    "static-batch-seeded-overfit": "write batch_is_static()",
    "overfit-ladder": "write overfit_ladder()",
    "write-it-twice": "write masked_means_loop()",
    "pipeline-test": "write test_every_layer_learns()",
}
# The drill's reading of a passing solution; None where the exercise measures no training run
# (a one-backward audit, one step, one batch of labels, one spiking batch, one step's first NaN,
# two versions of one reduction, a test of one backward), so no drill signature is filled.
SOLUTION_VERDICT: dict[str, str | None] = {
    "parameter-audit": None,
    "relative-update": None,
    "label-audit": None,
    "batch-noise-spike": None,
    "first-non-finite": None,
    "write-it-twice": None,
    "static-batch-seeded-overfit": None,
    "overfit-ladder": "fits",
    "pipeline-test": None,
    "overfit-shuffled-pairs": "fits",
    "graph-detached-features": "intact",
    "labels-shift-once": "shifted-once",
    "eval-mode-remeasure": "train-noise",
    "optimizer-new-head": "all-optimized",
    "accumulation-big-batch-step": "healthy",
    "mixed-precision-float32-step": "healthy",
    "per-token-loss": "per-token",
    "evaluation-encodes-like-training": "healthy",
    "group-leakage-honest-split": "honest",
    "nan-hunt-confident-logits": "clean",
    "padding-both-masks": "healthy",
    "loss-spikes-wrong-labels": "clean",
    "lr-sweep-choose-rate": "bracketed",
    "init-check-sound-start": "healthy",
    "gradient-check-smooth-l1-backward": "correct",
    "loss-vs-metric-rare-class": "aligned",
    "overfitting-honest-early-stop": "generalises",
    "silent-no-learning-gradient-panel": "healthy",
}


def test_every_exercise_is_covered() -> None:
    assert sorted(SLUGS) == sorted([*STARTER_FAILS, *UNWRITTEN]) == sorted(SOLUTION_VERDICT)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("slug", sorted(STARTER_FAILS))
def test_the_starter_fails_exactly_the_checks_its_bug_breaks(slug: str, seed: int) -> None:
    judgement = starter(slug, seed)
    failing, verdict = STARTER_FAILS[slug]
    assert judgement.status == "failed", judgement.message
    assert {key for key, status in statuses(judgement).items() if status != "pass"} == failing
    assert judgement.verdict == verdict
    assert judgement.verdict_text


@pytest.mark.parametrize("slug", sorted(UNWRITTEN))
def test_a_blank_starter_is_an_error_that_says_what_to_write(slug: str) -> None:
    judgement = starter(slug, 0)
    assert judgement.status == "error"
    assert judgement.message and f"NotImplementedError: {UNWRITTEN[slug]}" in judgement.message
    assert set(statuses(judgement).values()) == {"error"}
    assert judgement.verdict is None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("slug", SLUGS)
def test_the_solution_passes_every_check(slug: str, seed: int) -> None:
    judgement = solution(slug, seed)
    assert judgement.status == "passed", [c.message for c in judgement.checks]
    assert set(statuses(judgement).values()) == {"pass"}
    assert judgement.verdict == SOLUTION_VERDICT[slug]


# -- the measured bands ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_overfit_bands(seed: int) -> None:
    broken = numbers(starter("overfit-shuffled-pairs", seed))
    fixed = numbers(solution("overfit-shuffled-pairs", seed))
    # One example is its own permutation: the broken loop still memorises it.
    assert broken["loss (1 example)"] < 0.01
    # Two and five: the loss stays up near the entropy of the batch's label mix (ln 2; 2:1:1:1).
    # With two examples the final weights are one snapshot of a model pulled between the two
    # pairings the last steps drew, so that one is read in a wider band.
    assert broken["loss (2 examples)"] == pytest.approx(math.log(2), rel=0.5)
    five = -(0.4 * math.log(0.4) + 3 * 0.2 * math.log(0.2))
    assert broken["loss (5 examples)"] == pytest.approx(five, rel=0.15)
    for label in ("1 example", "2 examples", "5 examples"):
        assert fixed[f"loss ({label})"] < 0.01
        assert fixed[f"weight change ({label})"] > 0.1


@pytest.mark.parametrize("seed", SEEDS)
def test_break_the_graph_bands(seed: int) -> None:
    broken = numbers(starter("graph-detached-features", seed))
    fixed = numbers(solution("graph-detached-features", seed))
    for run in ("run A", "run B"):
        assert broken[f"backbone change ({run})"] == 0.0
        assert broken[f"head change ({run})"] > 0.5
        assert 0.4 < broken[f"loss ({run})"] < 1.1  # the head alone, on frozen random features
        assert fixed[f"backbone change ({run})"] > 0.1
        assert fixed[f"loss ({run})"] < 0.01


@pytest.mark.parametrize("seed", SEEDS)
def test_shift_once_bands(seed: int) -> None:
    broken = starter("labels-shift-once", seed)
    fixed = solution("labels-shift-once", seed)
    floor = numbers(fixed)["next-token entropy"]
    assert floor == pytest.approx(math.log(2))
    for run in ("run A", "run B"):
        assert numbers(broken)[f"next-letter loss ({run})"] > 2.0
        assert numbers(fixed)[f"next-letter loss ({run})"] == pytest.approx(floor, rel=0.15)
    # As trained, the double shift sits on the two-step entropy; the fix on the next-token one.
    two_step = broken.signature["two_step_entropy"]
    assert broken.signature["response_loss"] == pytest.approx(two_step, rel=0.15)
    assert fixed.signature["response_loss"] == pytest.approx(floor, rel=0.15)


@pytest.mark.parametrize("seed", SEEDS)
def test_eval_mode_bands(seed: int) -> None:
    broken = numbers(starter("eval-mode-remeasure", seed))
    fixed = numbers(solution("eval-mode-remeasure", seed))
    for case, run in enumerate(("run A", "run B")):
        reference = fixed[f"eval-mode loss ({run})"]
        dropout = fixed[f"train-mode loss, mean of 4 ({run})"]
        assert dropout - reference > 0.08  # the two modes clearly differ
        assert abs(fixed[f"your number ({run})"] - reference) < 1e-5
        if handed_in_train_mode(case):
            assert broken[f"your number ({run})"] == pytest.approx(dropout, abs=0.05)
        else:  # handed over in eval mode, the starter measures right by luck
            assert abs(broken[f"your number ({run})"] - reference) < 1e-5


@pytest.mark.parametrize("seed", SEEDS)
def test_new_head_bands(seed: int) -> None:
    broken = numbers(starter("optimizer-new-head", seed))
    fixed = numbers(solution("optimizer-new-head", seed))
    for run in ("run A", "run B"):
        assert broken[f"head change ({run})"] == 0.0
        assert fixed[f"head change ({run})"] > 0.1
        assert fixed[f"loss ({run})"] < 0.01
