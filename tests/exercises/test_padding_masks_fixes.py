"""The padding-masks fix judged on learner files kept as fixtures
(tests/exercises/fixtures/padding_both_masks/), on seeds 0-4, the seeds its thresholds were set
from: right files written differently from the reference pass every check and read "healthy",
and each plausible wrong fix fails exactly the checks its mistake breaks, with a message that
names what was measured. Then the bands themselves, and two files that would fool a judge that
believed the code instead of measuring it."""

import math
from collections.abc import Mapping

import pytest

from drills.catalog.padding_masks.exercises.both_masks.problem import PAD_TO, build
from drills.exercises.judge import hidden_seeds
from drills.exercises.registry import get_exercise
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    solution,
    starter,
    statuses,
)

SLUG = "padding-both-masks"
FILES = LearnerFiles(SLUG, "padding_both_masks")
RIGHT = FILES.right
RUNS = tuple(f"run at length {pad_to}" for pad_to in PAD_TO)
ALL = {"weights", "same-padded-or-alone", "loss-over-real-tokens", "trains"}

# Wrong file: the checks it fails (every other passes), the check that names its mistake and
# what that check says, and the drill's reading (None: the judge fills no signature).
WRONG = {
    # Padding is left out of the loss only: a real token's logits move by 0.28-0.89 with padding.
    "wrong_loss_mask_only": (
        {"same-padded-or-alone"},
        ("same-padded-or-alone", "padding still changes what a real token gets"),
        "pad-attended",
    ),
    # Padding is kept out of the attention only: the loss has a gradient at every padding
    # position (431-470 of them at length 24, 1,733-1,760 at 64).
    "wrong_attention_mask_only": (
        {"loss-over-real-tokens"},
        ("loss-over-real-tokens", "so padding is counted"),
        "pad-counted",
    ),
    # A score of 0 is a score like any other: padding keeps its weight after the softmax.
    "wrong_zero_score": (
        {"same-padded-or-alone"},
        ("same-padded-or-alone", "padding still changes what a real token gets"),
        "pad-attended",
    ),
    # Rows masked instead of columns: real tokens still attend to padding, and each padding
    # row, all -inf, is NaN after the softmax; its NaN gradient fills the weights with NaN.
    "wrong_query_mask": (
        ALL,
        ("same-padded-or-alone", "padding still changes what a real token gets"),
        None,
    ),
    # Padding zeroed in the sum, every position in the divisor: the real share (0.14-0.44)
    # times the per-real-token gradient. The drill has no reading for this loss.
    "wrong_padded_length_divisor": (
        {"loss-over-real-tokens"},
        ("loss-over-real-tokens", "the mean is taken over every position"),
        None,
    ),
    # Real keys hidden, padding attended: alone, with nothing but real keys, every score is
    # -inf and the logits are NaN.
    "wrong_inverted_mask": (
        {"same-padded-or-alone"},
        ("same-padded-or-alone", "logits are NaN or infinite"),
        "pad-attended",
    ),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_file_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "healthy"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, (key, says), verdict = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    named = next(check for check in found.checks if check.key == key)
    assert says in named.message, named.message
    assert found.verdict == verdict


# -- the bands the thresholds were set from (drills/.../both_masks/checks.py) -----------------


def number(measurements: Mapping[str, object], key: str) -> float:
    value = measurements[key]
    assert isinstance(value, int | float), (key, value)
    return float(value)


@pytest.mark.parametrize("seed", SEEDS)
def test_padding_bands(seed: int) -> None:
    fixed = solution(SLUG, seed).measurements
    broken = starter(SLUG, seed).measurements
    for run, pad_to in zip(RUNS, PAD_TO, strict=True):
        for length in (pad_to, 128):
            # A masked forward is the sequence alone to rounding: at most 1.6e-7 from the
            # initial weights and 2.5e-6 trained, against the drill's 1e-5 and 1e-4.
            before = f"largest shift padded to {length}, before training ({run})"
            after = f"largest shift padded to {length}, after training ({run})"
            assert number(fixed, before) < 1e-6
            assert number(fixed, after) < 1e-5
            # Attended padding moves a real token's logits by 0.28-0.89 before any training.
            assert number(broken, before) > 0.2
        assert number(fixed, f"largest gap alone, before training ({run})") < 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_loss_bands(seed: int) -> None:
    fixed = solution(SLUG, seed).measurements
    broken = starter(SLUG, seed).measurements
    hidden = hidden_seeds(get_exercise(SLUG), seed)
    for case, run in enumerate(RUNS):
        tokens, _ = build(case, hidden[case]).batches[0]
        padding = int((tokens == 0).sum())
        share = 1 - padding / tokens.numel()
        assert number(fixed, f"padding positions with a gradient ({run})") == 0
        # The mean over the real tokens to float32 rounding (6e-8 at most; the band is 1e-4).
        assert number(fixed, f"gradient difference ({run})") < 1e-6
        # The mean over every position: a gradient at every padding position, and the real
        # tokens' gradient the real share times the per-real-token mean's.
        assert number(broken, f"padding positions with a gradient ({run})") == padding
        ratio = number(broken, f"gradient at real tokens / per-real-token mean's ({run})")
        assert ratio == pytest.approx(share, rel=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_training_bands(seed: int) -> None:
    fixed = solution(SLUG, seed).measurements
    for run in RUNS:
        trained = number(fixed, f"held-out loss per real token, your model padded ({run})")
        initial = number(fixed, f"held-out loss per real token alone, initial ({run})")
        assert trained < 0.2 < 0.9 < initial  # measured 0.09-0.17, from 1.00-1.26
        # With both masks, the model padded and the problem's model alone score the same.
        alone = number(fixed, f"held-out loss per real token alone, trained ({run})")
        assert trained == pytest.approx(alone, abs=1e-5)
    # The wrong files that train end at 0.10-0.33, well under the ln 2 the check asks for:
    # their mistakes are the other checks' to name.
    for name in ("wrong_loss_mask_only", "wrong_attention_mask_only", "wrong_zero_score"):
        measured = FILES.judged(name, seed).measurements
        for run in RUNS:
            key = f"held-out loss per real token, your model padded ({run})"
            assert number(measured, key) < 0.4 < math.log(2)


# -- measured, not believed --------------------------------------------------------------------


def test_a_model_that_stops_attending_is_not_taken_for_a_masked_one() -> None:
    """Dropping the attention makes every output the same padded or alone; run alone, the model
    no longer computes what the problem's model does, and that is what the check reads first."""
    code = FILES.code("right_log_softmax_by_hand").replace(
        "weights @ self.value(h)", "self.value(h)"
    )
    found = judgement(SLUG, code)
    assert "same-padded-or-alone" in failing_checks(found)
    check = next(check for check in found.checks if check.key == "same-padded-or-alone")
    assert "run on a sequence alone" in check.message


def test_the_logged_loss_is_not_read() -> None:
    """A loop that trains on every position but reports the real tokens' mean is still caught:
    the check reads the gradient the step sent back, not the number on the curve."""
    code = FILES.code("wrong_attention_mask_only").replace(
        '        report("loss", step, loss.item())',
        "        real = tokens != PAD\n"
        '        report("loss", step, F.cross_entropy(logits[real], labels[real]).item())',
    )
    found = judgement(SLUG, code)
    assert statuses(found)["loss-over-real-tokens"] == "fail"
