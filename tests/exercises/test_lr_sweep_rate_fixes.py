"""The learning-rate fix judged on learner files kept as fixtures
(tests/exercises/fixtures/lr_sweep_choose_rate/), on seeds 0-4, the seeds its thresholds were
set from: right files written differently from the reference pass every check and read
"bracketed", and each plausible wrong fix fails exactly the checks its mistake breaks, with a
message in the learner's terms. Then the bands themselves, as the judge measures them, and the
rate and the loop, which the judge measures apart."""

import pytest

from drills.exercises.contract import Judgement
from drills.exercises.registry import get_exercise
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    signed,
    solution,
    starter,
    statuses,
)

SLUG = "lr-sweep-choose-rate"
FILES = LearnerFiles(SLUG, "lr_sweep_choose_rate")
RIGHT = FILES.right
METRES, CENTIMETRES = "32 units, targets in metres", "128 units, targets in centimetres"

# Wrong file: the checks it fails (every other passes), the check that names its mistake, and
# what that check says.
WRONG = {
    # The rate of 1.0 kept, every gradient clipped to a norm of 1e-3: nothing overflows, and the
    # trained loss stays at 80-87% of its start (drill's network) and 99.7% (the wide one).
    "wrong_clip_tiny_norm": (
        {"stable-rate", "trains"},
        "trains",
        "of the starting loss: it barely fell",
    ),
    # The rate of 1.0 kept, the non-finite steps skipped: the weights stop where the loss had
    # already run off, 1e32-1e39 times its start, finite but useless.
    "wrong_skip_nonfinite_steps": ({"stable-rate", "trains"}, "trains", "it went up"),
    # The lowest loss after one step: 0.3-1 on the wide network, or 0.03, which overflows only
    # at step 65-142; the file's own training at its picks comes back NaN on one run or both.
    "wrong_one_step_lowest": (
        {"weights", "stable-rate", "trains"},
        "stable-rate",
        "above 1.5 times its start",
    ),
    # The largest rate still finite after 10 steps: 3 on the drill's network (overflows at step
    # 11-12), 0.3-1 on the wide one.
    "wrong_short_run_largest": (
        {"weights", "stable-rate", "trains"},
        "stable-rate",
        "off to infinity at step",
    ),
    # 1.0 / 10,000: stable everywhere, the loss stays at 95-97% of its start on the drill's
    # network, and needs 108-134 steps to a tenth on the wide one, where 9-15 do.
    "wrong_rate_ten_thousand_lower": ({"pace", "trains"}, "pace", "fastest stable candidate"),
}


def message(found: Judgement, key: str) -> str:
    return next(check.message for check in found.checks if check.key == key)


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_file_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "bracketed"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, key, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    assert says in message(found, key), message(found, key)


# -- the bands the thresholds were set from (drills/.../choose_rate/checks.py) ----------------


def number(found: Judgement, name: str, run: str) -> float:
    value = found.measurements[f"{name} ({run})"]
    assert isinstance(value, int | float), (name, run, value)
    return float(value)


@pytest.mark.parametrize("seed", SEEDS)
def test_rate_bands(seed: int) -> None:
    fixed, broken = solution(SLUG, seed), starter(SLUG, seed)
    for run in (METRES, CENTIMETRES):
        # The reference picks a rate that trains about as fast as any candidate (measured: at
        # most 1.14 times the fastest's steps to a tenth) and ends far under the tenth (0.05-0.4%).
        steps = number(fixed, "steps to a tenth at the rate", run)
        assert steps <= 1.5 * number(fixed, "steps to a tenth, fastest candidate", run)
        assert number(fixed, "trained loss / start", run) < 0.01
        assert number(fixed, "highest loss / start at the rate", run) < 1.5
        # The starter's 1.0 jumps up within a step or two and overflows (steps 16-19 and 9-11).
        assert broken.measurements[f"rate ({run})"] == 1.0
        assert 5 <= number(broken, "overflow step at the rate", run) <= 25
    # A hundred-fold apart: 0.1-0.3 on the drill's network, 1e-3-1e-2 on the wide one.
    assert number(fixed, "rate", METRES) >= 10 * number(fixed, "rate", CENTIMETRES)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_tempting_fixes_in_numbers(seed: int) -> None:
    clipped = FILES.judged("wrong_clip_tiny_norm", seed)
    assert 0.7 < number(clipped, "trained loss / start", METRES) < 0.95
    assert number(clipped, "trained loss / start", CENTIMETRES) > 0.99
    lowered = FILES.judged("wrong_rate_ten_thousand_lower", seed)
    assert number(lowered, "trained loss / start", METRES) > 0.9
    wide = number(lowered, "steps to a tenth at the rate", CENTIMETRES)
    assert wide > 5 * number(lowered, "steps to a tenth, fastest candidate", CENTIMETRES)
    for name in ("wrong_one_step_lowest", "wrong_short_run_largest"):
        chosen = FILES.judged(name, seed)
        assert number(chosen, "highest loss / start at the rate", CENTIMETRES) > 1.5


# -- what the judge reads ----------------------------------------------------------------------


def test_the_rate_is_judged_by_the_judges_run_not_by_the_loop() -> None:
    """A loop that quietly trains at a tenth of the rate it is given trains well, and its
    choose_lr, sweeping through that loop, names a rate ten times the one that trained: plain
    SGD at the named rate blows up, and that is what stable-rate reads."""
    code = get_exercise(SLUG).solution
    given = "    optimizer = torch.optim.SGD(model.parameters(), lr=lr)\n"
    assert given in code
    code = code.replace(given, given.replace("lr=lr)", "lr=lr / 10)"))
    found = judgement(SLUG, code)
    assert statuses(found) == {
        "weights": "pass",
        "stable-rate": "fail",
        "pace": "pass",
        "trains": "pass",
    }
    assert found.verdict == "too-aggressive"


@pytest.mark.parametrize("returned", ['"0.1"', "None", "-0.1", "float('nan')"])
def test_choose_lr_must_return_a_positive_number(returned: str) -> None:
    code = get_exercise(SLUG).starter.replace("    return LR\n", f"    return {returned}\n")
    found = judgement(SLUG, code)
    assert found.status == "error"
    assert found.message and "choose_lr returned" in found.message
    assert failing_checks(found) == {"weights", "stable-rate", "pace", "trains"}


def test_the_drill_reads_the_run_where_the_rate_failed() -> None:
    """On seed 1 the one-step pick is right on the drill's network (0.3) and blows up on the
    wide one: the signature is the wide network's, and it reads too-aggressive. A rate far
    too small reads too-cautious; the reference's rate has its edge within a factor of ten."""
    one_step = FILES.judged("wrong_one_step_lowest", 1)
    assert number(one_step, "rate", METRES) == number(one_step, "rate", CENTIMETRES) == 0.3
    assert one_step.verdict == "too-aggressive"
    assert signed(one_step)["lr_1"] == 0.3 and signed(one_step)["unstable_count"] == 2
    assert FILES.judged("wrong_rate_ten_thousand_lower", 1).verdict == "too-cautious"
    signature = signed(solution(SLUG, 1))
    assert signature["largest_stable_lr"] == signature["lr_1"]
    assert signature["smallest_unstable_lr"] == signature["lr_2"]
    assert signature["lr_1"] < signature["stability_limit"] < signature["lr_2"]
