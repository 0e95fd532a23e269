"""The overfit ladder (overfit-ladder), judged on learner files kept as fixtures
(tests/exercises/fixtures/overfit_ladder/) on seeds 0-4: right files written differently from
the reference pass every check and read "fits", and each plausible wrong file fails exactly the
checks its mistake breaks, with a message in the learner's terms. Then the judge's truths: the
loss it measures against one written out by hand, and the hidden networks fixed by their seed
whatever the learner's code does to the global random state."""

import math
from pathlib import Path

import pytest
import torch

from drills.catalog.overfit_one_batch.exercises.ladder import checks, problem
from drills.exercises.judge import hidden_seeds
from drills.exercises.registry import get_exercise
from tests.exercises.judging import SEEDS, failing_checks, judgement, numbers, solution

SLUG = "overfit-ladder"
FOLDER = Path(__file__).parent / "fixtures" / "overfit_ladder"
RIGHT = sorted(path.stem for path in FOLDER.glob("right_*.py"))
FITS = {"fits-1", "fits-2", "fits-5"}

# Wrong file: the checks it fails (every other passes) and what the first of them says.
WRONG = {
    # No gradient reaches a weight: every rung stays near chance.
    "wrong_no_grad_loop": (
        FITS,
        "In case '16 features, 4 classes' the loss of the model you returned for 1 example is",
    ),
    # 256 random labels, a few seen once or twice each: nothing is learnt by heart.
    "wrong_random_batches": (FITS, "a working loop takes it under 0.03 nats"),
    # The summed gradients overshoot: 1 and 2 examples still fit, 5 blow up.
    "wrong_no_zero_grad": (
        {"weights", "fits-5"},
        "the model you returned for 5 examples came back with NaN or infinite weights",
    ),
    "wrong_few_steps": (FITS, "a working loop takes it under 0.03 nats"),
    "wrong_one_model_for_all": (
        {"fresh-models"},
        "In case '16 features, 4 classes' the models you returned for 1 and 2 examples are the "
        "same network",
    ),
}


def fixture(name: str) -> str:
    return (FOLDER / f"{name}.py").read_text()


def test_every_fixture_is_judged_here() -> None:
    kept = {path.stem for path in FOLDER.glob("*.py")}
    assert kept == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3
    assert len(problem.SETS) == len(get_exercise(SLUG).cases)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_file_written_differently_passes(name: str, seed: int) -> None:
    found = judgement(SLUG, fixture(name), seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "fits"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_file_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, says = WRONG[name]
    found = judgement(SLUG, fixture(name), seed)
    assert found.status == "failed", found.message
    assert failing_checks(found) == breaks
    messages = [check.message for check in found.checks if check.key in breaks]
    assert any(says in message for message in messages), messages
    assert all(message.startswith("In case '") for message in messages)


def edited(old: str, new: str) -> str:
    code = get_exercise(SLUG).solution
    assert old in code
    return code.replace(old, new)


def test_a_loop_that_reports_low_losses_without_learning_fails() -> None:
    """The judge reads the weights, not the curve: a loop that reports zeros and takes no
    step fails every rung."""
    code = edited(
        "        if loss.item() < TARGET:\n",
        "        report(name, step, 0.0)\n        if True:\n",
    )
    found = judgement(SLUG, code)
    assert failing_checks(found) == FITS


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (
            edited("    return models\n", "    return list(models.values())\n"),
            "overfit_ladder must return a dict with one trained model per rung, keys 1, 2 and 5",
        ),
        (
            edited(
                "        models[k] = model\n", "        models[k] = copy.deepcopy(model)\n"
            ).replace(
                "from collections.abc import Callable\n",
                "import copy\nfrom collections.abc import Callable\n",
            ),
            "the model returned for 1 example(s) is not one make_model() built",
        ),
    ],
    ids=["list", "copies"],
)
def test_a_file_that_breaks_the_format_is_told_how(code: str, says: str) -> None:
    found = judgement(SLUG, code)
    assert found.status == "error"
    assert found.message and says in found.message
    assert {check.status for check in found.checks} == {"error"}


# -- the judge's truths -------------------------------------------------------------------------


def by_hand(net: torch.nn.Module, rung_problem: problem.Problem, rung: int) -> float:
    """Cross-entropy over the rung's examples, one at a time in float64."""
    total = 0.0
    with torch.no_grad():
        for x, label in zip(
            rung_problem.features[:rung], rung_problem.labels[:rung].tolist(), strict=True
        ):
            logits: list[float] = net.double().eval()(x.double()[None])[0].tolist()
            top = max(logits)
            total += top + math.log(sum(math.exp(v - top) for v in logits)) - logits[label]
    return total / rung


@pytest.mark.parametrize("case", range(len(problem.SETS)))
def test_the_rung_loss_agrees_with_one_written_out_by_hand(case: int) -> None:
    for seed in hidden_seeds(get_exercise(SLUG), 0):
        built = problem.build(case, seed)
        for number, rung in enumerate(problem.RUNGS):
            net = problem.make_net(built.shape, seed, number)
            measured = problem.rung_loss(net, built, rung)
            assert measured == pytest.approx(by_hand(net, built, rung), rel=1e-5)
        assert len(set(built.labels[:5].tolist())) >= 2  # no rung is won by a constant


def test_the_hidden_networks_are_fixed_by_their_seed_alone() -> None:
    """The learner's seeding cannot change them, and the judge rebuilds any of them."""
    shape = problem.SETS[0]
    torch.manual_seed(1)
    first = problem.make_net(shape, 7, 2).state_dict()
    state = torch.random.get_rng_state()
    torch.manual_seed(99)
    again = problem.make_net(shape, 7, 2).state_dict()
    assert all(torch.equal(first[name], again[name]) for name in first)
    torch.manual_seed(1)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global state left alone
    other = problem.make_net(shape, 7, 1).state_dict()
    assert not torch.equal(first["0.weight"], other["0.weight"])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_solution_meets_its_own_target_with_room_under_the_band(seed: int) -> None:
    measured = numbers(solution(SLUG, seed))
    losses = [value for key, value in measured.items() if key.startswith("loss (")]
    assert len(losses) == len(problem.RUNGS) * len(problem.SETS)
    assert max(losses) < 0.01 < checks.FITS_BELOW
