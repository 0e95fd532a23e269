"""Numeric predictions: the band arithmetic, and for each drill that declares one, that a learner
who predicts the theoretical value of a variant matches on every seed."""

import math
from functools import cache
from typing import Any

import pytest

from drills.core.catalogue import describe
from drills.core.contract import NumericPrediction, score_numeric, score_numeric_predictions
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)


def prediction(relative: float | None = None, absolute: float | None = None) -> NumericPrediction:
    return NumericPrediction(
        "final_loss",
        "Where?",
        "nats",
        "hint",
        "settled at",
        relative_band=relative,
        absolute_band=absolute,
    )


@pytest.mark.parametrize(
    ("band", "predicted", "observed", "matched"),
    [
        (prediction(relative=0.15), 0.69, 0.72, True),
        (prediction(relative=0.15), 0.69, 0.82, False),  # 0.13 > 0.15 * 0.82 = 0.123
        (prediction(relative=0.15), 0.0, 0.01, False),  # a relative band alone never fits zero
        (prediction(relative=0.15, absolute=0.1), 0.0, 0.09, True),
        (prediction(relative=0.15, absolute=0.1), 1.0, 1.15, True),  # the wider band counts
        (prediction(relative=0.15, absolute=0.1), 1.0, 1.2, False),
        (prediction(relative=0.15), -0.72, -0.69, True),  # |observed| scales the band
        (prediction(absolute=0), 40, 40, True),
        (prediction(absolute=0), 41, 40, False),
        (prediction(absolute=2), 38, 40, True),
    ],
)
def test_score_numeric_compares_within_the_wider_band(
    band: NumericPrediction, predicted: float, observed: float, matched: bool
) -> None:
    assert score_numeric(band, predicted, observed) is matched


@pytest.mark.parametrize("observed", [None, math.nan, math.inf, True, "40"])
def test_a_run_without_the_number_scores_nothing(observed: Any) -> None:
    assert score_numeric(prediction(absolute=1.0), 40.0, observed) is None


@pytest.mark.parametrize(
    ("band", "words"),
    [
        (prediction(relative=0.15, absolute=0.1), "±0.1 or ±15%, whichever is wider"),
        (prediction(relative=0.15), "±15%"),
        (prediction(absolute=2), "±2"),
        (prediction(absolute=0), "exactly"),
    ],
)
def test_the_band_is_stated_in_words(band: NumericPrediction, words: str) -> None:
    assert band.band == words


def test_describe_lists_the_numeric_predictions_with_their_band() -> None:
    described = describe(get_drill("overfit-one-batch"))["numeric_predictions"]
    assert [item["key"] for item in described] == ["final_loss"]
    assert described[0]["band"] == "±0.1 or ±15%, whichever is wider"


def test_scoring_a_drill_ignores_undeclared_keys_and_missing_numbers() -> None:
    drill = get_drill("nan-hunt")
    signature = {"first_nonfinite_step": None}
    assert score_numeric_predictions(drill, {"first_nonfinite_step": 40, "x": 1}, signature) == {
        "first_nonfinite_step": None
    }


@cache
def observed(slug: str, knobs: tuple[tuple[str, str], ...], seed: int, key: str) -> Any:
    return run_drill(slug, dict(knobs), seed)["signature"][key]


# (drill, knobs of the variant, the value theory gives for it). Variants whose number depends on
# this run's own data (a broadcast target's variance, the share of PAD labels) or on how fast
# something grows (logits sharpening) have no such value and are left out.
THEORY = [
    ("overfit-one-batch", {"bug": "none"}, 0.0),
    ("overfit-one-batch", {"bug": "shuffled-labels"}, math.log(4)),  # 8 examples, 2 per class
    ("double-shift-labels", {"labels": "shift-once"}, math.log(2)),
    ("double-shift-labels", {"labels": "shift-twice"}, math.log(4)),  # 2 x 2 successors
    ("double-shift-labels", {"labels": "no-shift"}, 0.0),
    ("double-shift-labels", {"labels": "shift-once", "attention": "unmasked"}, 0.0),
    ("nan-hunt", {"cause": "nan-in-data"}, 40),  # the batch at step 40, says the scenario
    ("nan-hunt", {"cause": "zero-token-denominator"}, 40),
    ("nan-hunt", {"cause": "mask-after-invalid"}, 40),
    ("gradient-accumulation", {"accumulation": "divided"}, 1.0),  # the big batch's own step
    ("gradient-accumulation", {"accumulation": "summed"}, 8.0),  # k = 8 micro-batches
    ("mixed-precision", {"unscale": "first"}, 1.0),  # read after unscale_: the true norm
    ("mixed-precision", {"unscale": "late"}, 1024.0),  # read before it: times the scale, 2^10
    # ln 16 for each first token, ln 2 for the rest: over 7-9 and 40-56 long, about 0.89
    ("variable-length-loss", {"lengths": "mixed"}, 0.89),
    ("variable-length-loss", {"lengths": "equal"}, (math.log(16) + 7 * math.log(2)) / 8),
    ("eval-pipeline-mismatch", {"evaluation": "double-start"}, 1.0),  # <bos> twice
    ("eval-pipeline-mismatch", {"evaluation": "no-separator"}, -1.0),  # no <sep>
    ("eval-pipeline-mismatch", {"evaluation": "no-lowercase"}, 0.0),  # other ids, same count
    ("batch-noise", {"bad_batch": "off"}, -0.5),  # spread = σ / √B at fixed weights
    ("batch-noise", {"bad_batch": "on"}, -0.5),  # whatever the run did, the probe's law holds
    ("group-leakage", {"split": "random-rows"}, 1 - 0.25**3),  # 3 other reviews, each 1/4 in val
    ("group-leakage", {"split": "by-user"}, 0.0),  # whole users on one side
    ("padding-masks", {"loss_mask": "real-tokens"}, 1.0),  # the mean over the real tokens
    ("padding-masks", {"loss_mask": "all-positions"}, 10 / 32),  # 10 real tokens of 32 on average
]


@pytest.mark.parametrize(
    ("slug", "knobs", "theory"),
    THEORY,
    ids=[f"{slug}-{'-'.join(knobs.values())}" for slug, knobs, _ in THEORY],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_predicting_the_theoretical_value_matches_on_every_seed(
    slug: str, knobs: dict[str, str], theory: float, seed: int
) -> None:
    drill = get_drill(slug)
    (numeric,) = drill.numeric_predictions
    value = observed(slug, tuple(knobs.items()), seed, numeric.key)
    assert score_numeric(numeric, theory, value) is True, (value, numeric.band)


@pytest.mark.parametrize(
    ("slug", "knobs", "wrong"),
    [
        # The neighbouring floor is outside the band: the score tells the variants apart.
        ("overfit-one-batch", {"bug": "shuffled-labels"}, 0.0),
        ("double-shift-labels", {"labels": "shift-once"}, math.log(4)),
        ("double-shift-labels", {"labels": "shift-twice"}, math.log(2)),
        ("double-shift-labels", {"labels": "no-shift"}, math.log(2)),
        ("nan-hunt", {"cause": "nan-in-data"}, 41),
        ("gradient-accumulation", {"accumulation": "summed"}, 1.0),
        ("gradient-accumulation", {"accumulation": "divided"}, 8.0),
        ("mixed-precision", {"unscale": "late"}, 1.0),
        ("mixed-precision", {"unscale": "first"}, 1024.0),
        ("variable-length-loss", {"lengths": "mixed"}, math.log(2)),  # the first tokens forgotten
        ("eval-pipeline-mismatch", {"evaluation": "double-start"}, 0.0),
        ("eval-pipeline-mismatch", {"evaluation": "no-separator"}, 1.0),
        ("batch-noise", {"bad_batch": "off"}, -1.0),  # the spread of a sum's mean is not 1/B
        ("group-leakage", {"split": "random-rows"}, 0.0),
        ("group-leakage", {"split": "by-user"}, 1 - 0.25**3),
        ("padding-masks", {"loss_mask": "all-positions"}, 1.0),
        ("padding-masks", {"loss_mask": "real-tokens"}, 10 / 32),
    ],
)
def test_the_neighbouring_theory_misses(slug: str, knobs: dict[str, str], wrong: float) -> None:
    drill = get_drill(slug)
    (numeric,) = drill.numeric_predictions
    assert (
        score_numeric(numeric, wrong, observed(slug, tuple(knobs.items()), 0, numeric.key)) is False
    )
