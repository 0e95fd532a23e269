"""The gradient-accumulation fix judged on learner files kept as fixtures
(tests/exercises/fixtures/accumulation_big_batch_step/), on seeds 0-4, the seeds its thresholds
were set from: right loops written differently from the reference pass every check, and each
plausible wrong fix fails exactly the checks its mistake breaks, with a message in the learner's
terms. Then the bands themselves, as the judge measures them on the starter and the solution,
and the single step and the training run, which the judge measures apart."""

import pytest

from drills.exercises.registry import get_exercise
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    numbers,
    solution,
    starter,
    statuses,
)

SLUG = "accumulation-big-batch-step"
FILES = LearnerFiles(SLUG, "accumulation_big_batch_step")
RIGHT = FILES.right

# Wrong file: the checks it fails (every other passes) and what the first of them says.
WRONG = {
    # Right at k = 8 only: the hidden runs at k = 1 and 3 show the step 8 / k times too short.
    "wrong_divide_by_eight": ({"big-batch-step"}, "At k = 1, one step of your loop moved the"),
    # Not an accumulation fix: right at k = 8 only, as dividing by 8 is.
    "wrong_lower_rate": ({"big-batch-step"}, "0.125 times as far"),
    # k - 1 whole gradients and one divided: nearly k times the step, and it still blows up.
    "wrong_divide_last_only": ({"big-batch-step", "trains-to-floor"}, "in another direction"),
    # Only the last micro-batch's gradient, divided by k: short steps on 16 examples.
    "wrong_zero_grad_each_micro_batch": (
        {"big-batch-step", "trains-to-floor"},
        "in another direction",
    ),
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
    breaks, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    step = next(check for check in found.checks if check.key == "big-batch-step")
    assert says in step.message, step.message


def test_jumping_to_the_answer_fails_the_step_check() -> None:
    """A loop that ignores its batches and writes the least-squares weights reaches the floor;
    its single step is not the big batch's, and that is measured from the weights too."""
    code = FILES.code("right_mean_then_backward").replace(
        "    optimizer = torch.optim.SGD(model.parameters(), lr=LR)\n",
        "    xs = torch.cat([x for x, _ in micro_batches])\n"
        "    ys = torch.cat([y for _, y in micro_batches])\n"
        "    design = torch.cat([xs, torch.ones(len(xs), 1)], dim=1)\n"
        "    answer = torch.linalg.lstsq(design, ys).solution\n"
        "    with torch.no_grad():\n"
        "        model.weight.copy_(answer[:8].T)\n"
        "        model.bias.copy_(answer[8])\n"
        "    return\n",
    )
    found = judgement(SLUG, code)
    assert statuses(found) == {
        "weights": "pass",
        "big-batch-step": "fail",
        "trains-to-floor": "pass",
    }


# -- the bands the thresholds were set from (drills/.../big_batch_step/checks.py) -------------


@pytest.mark.parametrize("seed", SEEDS)
def test_accumulation_bands(seed: int) -> None:
    broken = numbers(starter(SLUG, seed))
    fixed = numbers(solution(SLUG, seed))
    for k in (1, 3, 8):
        run = f"k = {k}"
        # The big batch's step to float32 rounding (1.2e-7 at most), far under the 1e-5 band.
        assert fixed[f"step difference ({run})"] < 2e-7
        # Summed, the step is k times the big batch's; at k = 1 the two loops are one.
        assert broken[f"step / big-batch step ({run})"] == pytest.approx(k, rel=1e-6)
    assert fixed["trained loss / minimum (k = 8)"] < 1.005  # 2% band
    assert broken["trained loss / minimum (k = 8)"] > 1e15  # blown up


# -- the single step and the training run are measured apart ----------------------------------


def dividing_only(when: str) -> str:
    """The reference solution, dividing by k only when `when` holds (else the losses summed)."""
    code = get_exercise(SLUG).solution
    divided = "            (loss / k).backward()\n"
    assert divided in code
    return code.replace(
        divided,
        f"            (loss / k if {when} else loss).backward()\n",
    )


def test_a_loop_right_for_the_single_step_only_fails_the_floor() -> None:
    found = judgement(SLUG, dividing_only("len(micro_batches) == k"))
    assert failing_checks(found) == {"trains-to-floor"}


def test_a_loop_right_for_the_training_run_only_fails_the_step() -> None:
    found = judgement(SLUG, dividing_only("len(micro_batches) > k"))
    assert failing_checks(found) == {"big-batch-step"}
