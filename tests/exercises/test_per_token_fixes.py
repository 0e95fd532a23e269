"""The variable-length-loss fix judged on learner files kept as fixtures
(tests/exercises/fixtures/per_token_loss/), on seeds 0-4, the seeds its thresholds were set
from: right loops written differently from the reference pass every check, and each plausible
wrong fix fails exactly the checks its mistake breaks, with a message in the learner's terms.
Then the bands themselves, as the judge measures them on the starter and the solution."""

import pytest

from tests.exercises.judging import SEEDS, LearnerFiles, numbers, solution, starter

SLUG = "per-token-loss"
FILES = LearnerFiles(SLUG, "per_token_loss")
RIGHT = FILES.right
RUNS = ("an ordinary batch", "the long batch")

# Wrong file: the checks it fails (every other passes) and what the step check says.
WRONG = {
    # Right only on a batch of exactly 64 tokens: 0.92-1.03 times the step on an ordinary batch,
    # 5.8-6.1 times on the long one, and training ends 1.4 times the floor or more.
    "wrong_fixed_budget": ({"per-token-step", "trains-to-floor"}, "in the same direction"),
    # The rate divided by 8 with the sum per sequence kept: the very steps of the budget of 64.
    "wrong_lower_rate": ({"per-token-step", "trains-to-floor"}, "in the same direction"),
    # Padding counted in the denominator: 0.82-0.92 times the step, still in its direction.
    "wrong_padded_mean": ({"per-token-step"}, "in the same direction"),
    # Each sequence weighed alike: another direction (cosine 0.998), 3-7% of the step apart.
    "wrong_mean_of_sequence_means": ({"per-token-step"}, "in another direction"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 2


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_loop_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "per-token"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    step = next(check for check in found.checks if check.key == "per-token-step")
    assert says in step.message, step.message


def test_a_fixed_divisor_reads_as_a_token_sum() -> None:
    # The drill's own reading of the measured steps: one fixed divisor, 64, on both batches.
    found = FILES.judged("wrong_fixed_budget")
    assert found.verdict == "token-sum"
    assert found.signature["divisor_min"] == pytest.approx(64, rel=1e-4)
    assert found.signature["divisor_max"] == pytest.approx(64, rel=1e-4)


# -- the bands the thresholds were set from (drills/.../per_token_loss/checks.py) -------------


@pytest.mark.parametrize("seed", SEEDS)
def test_per_token_bands(seed: int) -> None:
    broken = numbers(starter(SLUG, seed))
    fixed = numbers(solution(SLUG, seed))
    for run in RUNS:
        # The per-token step to float32 rounding (measured: 2.7e-7 to 5e-7), under the 1e-4 band.
        assert fixed[f"step difference ({run})"] < 1e-6
        # Measured 1.04-1.12 times the floor, against the 1.2 band.
        assert fixed[f"held-out loss / floor ({run})"] < 1.15
    # Summed per sequence: the step is the tokens per sequence times the per-token one.
    assert 7.0 <= broken["step / per-token step (an ordinary batch)"] <= 9.0  # 7-9 tokens each
    assert 40.0 <= broken["step / per-token step (the long batch)"] <= 56.0  # 40-56 tokens each
