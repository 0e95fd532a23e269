"""The mixed-precision fix judged on learner files kept as fixtures
(tests/exercises/fixtures/mixed_precision_float32_step/), on seeds 0-4, the seeds its thresholds
were set from: right loops written differently from the reference pass every check, and each
plausible wrong fix fails exactly the checks its mistake breaks, with a message in the learner's
terms. Then the bands themselves, as the judge measures them on the starter and the solution."""

import pytest

from drills.catalog.mixed_precision.exercises.float32_step.checks import STEP_BAND
from drills.exercises.contract import Judgement
from tests.exercises.judging import SEEDS, LearnerFiles, solution, starter

SLUG = "mixed-precision-float32-step"
FILES = LearnerFiles(SLUG, "mixed_precision_float32_step")
RIGHT = FILES.right
RUNS = ("scale 2^10", "quiet head, scale 2^13", "scale 2^24")

# Wrong file: the checks it fails (every other passes), the check whose message is read, and
# what that message says.
WRONG = {
    # Right where the gradients fit float16 unscaled; the quiet head's are lost to float16,
    # and with nothing to skip, the overflowing run takes its first step.
    "wrong_no_scaler": (
        {"float32-step", "skips-overflow"},
        "skips-overflow",
        "a step that should have been skipped was taken",
    ),
    # Right at 1024 only: 1/8 of the step at 2^13; at 2^24 the scale comes down to about 2^16
    # and the steps stay 1/64 of float32's, too short to train in 50 steps.
    "wrong_threshold_times_1024": (
        {"float32-step", "trains"},
        "float32-step",
        "At quiet head, scale 2^13, one step of your loop moved the weights 0.125 times",
    ),
    # Unscaled twice: every step 1/scale of float32's, as the starter's.
    "wrong_unscale_by_hand": ({"float32-step", "trains"}, "float32-step", "0.000977 times"),
    # Not clipped at all: the steps are float32's unclipped, too long; it still trains.
    "wrong_no_clipping": ({"float32-step"}, "float32-step", "away from its float32 step"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_loop_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "healthy"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, read, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    check = next(check for check in found.checks if check.key == read)
    assert says in check.message, check.message


# -- the bands the thresholds were set from (drills/.../float32_step/checks.py) ---------------


def numbers(judged: Judgement) -> dict[str, float]:
    return {key: float(value) for key, value in judged.measurements.items()}  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", SEEDS)
def test_mixed_precision_bands(seed: int) -> None:
    broken = numbers(starter(SLUG, seed))
    fixed = numbers(solution(SLUG, seed))
    for run, scale in zip(RUNS[:2], (2**10, 2**13), strict=True):
        # float16 rounding: at most 0.6% on one parameter (under the quiet head).
        assert fixed[f"worst parameter difference ({run})"] < STEP_BAND / 4
        assert fixed[f"step / float32 step ({run})"] == pytest.approx(1.0, abs=2e-3)
        # Clipped while scaled: the closed form 1 / (scale x min(1, ||g||)), the gradient
        # norm at these weights being above 1 on every seed.
        assert broken[f"step / float32 step ({run})"] == pytest.approx(1 / scale, rel=1e-3)
    # Where the first scaled gradients overflow, both loops skip the first step.
    assert fixed["step / float32 step (scale 2^24)"] == 0.0
    assert broken["step / float32 step (scale 2^24)"] == 0.0
    for run in RUNS:
        assert fixed[f"trained loss / first ({run})"] < 0.2  # LEARNS_BY is 0.5
        assert broken[f"trained loss / first ({run})"] > 0.95


@pytest.mark.parametrize("seed", SEEDS)
def test_the_drill_reads_the_judged_step(seed: int) -> None:
    """The drill's diagnose() on the signature the checker fills from the first run: the
    starter's step is the closed form of a clip on scaled gradients, the norm it clipped by
    (read off its step) the true norm times the scale."""
    broken, fixed = starter(SLUG, seed), solution(SLUG, seed)
    assert broken.verdict == "clipped-scaled" and fixed.verdict == "healthy"
    assert broken.signature["norm_ratio"] == pytest.approx(2**10, rel=1e-3)
    assert fixed.signature["norm_ratio"] == pytest.approx(1.0, rel=1e-3)
