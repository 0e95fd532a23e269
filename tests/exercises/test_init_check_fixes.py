"""The init fix judged on learner files kept as fixtures
(tests/exercises/fixtures/init_check_sound_start/), on seeds 0-4: right inits written
differently from the reference pass every check and read "healthy", and each plausible wrong
fix fails the checks its mistake breaks, with a message in the learner's terms. Then the bands
themselves, as the judge measures them on the starter and the solution, and what the judge
does with a network whose parameters init_weights() leaves unset."""

import pytest
import torch

from drills.catalog.init_check.exercises.sound_start.checks import (
    ACTIVATION_SIZE,
    FIRST_LOSS,
    GRADIENT_BAND,
)
from drills.catalog.init_check.exercises.sound_start.problem import CASES, shape_of, unset_model
from drills.exercises.contract import Judgement
from drills.exercises.registry import get_exercise
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    solution,
    starter,
)

SLUG = "init-check-sound-start"
FILES = LearnerFiles(SLUG, "init_check_sound_start")
RIGHT = FILES.right

# Wrong file: the checks it fails on every seed, those it may fail as well (every other passes),
# the check whose message is read, and what that message says.
WRONG = {
    # The logits are small again, but only because the last layer hides hidden activations of
    # 31-491 times the inputs' size; the hidden layers get ~1/1000 of its gradient, and the
    # first loss is still 1.2-2.9 times ln(C) on the deeper network on most seeds.
    "wrong_shrink_output_only": (
        {"activations", "gradients", "learns"},
        {"first-loss"},
        "gradients",
        "of the output layer's",
    ),
    # ln(C) exactly, and nothing else works: no unit fires, no gradient, one unit per layer.
    "wrong_all_zeros": (
        {"activations", "gradients", "live-units", "units-differ", "learns"},
        set(),
        "units-differ",
        "start as only 1 different one",
    ),
    # Right at fan-in 64 only: the wider network starts at 1.5-2.7 times ln(C).
    "wrong_std_for_width_64": ({"first-loss"}, set(), "first-loss", "On the wider network"),
    # A bias of -1.5 under weights of the right size: layers where no unit fires.
    "wrong_negative_bias": (
        {"activations", "gradients", "live-units", "learns"},
        set(),
        "live-units",
        "ReLUs output 0 for every example",
    ),
    # The first loss is ln(C), but each layer passes on a fraction of what it was given.
    "wrong_small_std": ({"activations", "learns"}, set(), "activations", "the signal fades"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_init_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "healthy"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    always, sometimes, read, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert always <= FILES.failing(name, seed) <= always | sometimes
    check = next(check for check in found.checks if check.key == read)
    assert says in check.message, check.message
    assert found.verdict != "healthy"  # the drill's reading, where it has one, is not fooled


# -- the bands the thresholds were set from (drills/.../sound_start/checks.py) ----------------


def numbers(judged: Judgement, what: str) -> list[float]:
    """One measurement on each hidden network."""
    values = [judged.measurements[f"{what} ({network})"] for network in CASES]
    assert all(isinstance(value, float) for value in values), values
    return [float(value) for value in values]  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", SEEDS)
def test_init_bands(seed: int) -> None:
    broken, fixed = starter(SLUG, seed), solution(SLUG, seed)
    low, high = FIRST_LOSS
    # The reference starts at ln(C) on every network, keeps the activations near the inputs'
    # size, the gradients within a factor of 25 of the layer above's, the units alive, and
    # trains to near 0.
    assert all(abs(ratio - 1) < 0.05 for ratio in numbers(fixed, "first loss / ln(C)"))
    assert all(0.5 < size < 2 for size in numbers(fixed, "largest activation size"))
    assert all(0.5 < size < 2 for size in numbers(fixed, "smallest activation size"))
    assert all(
        ratio > 4 * GRADIENT_BAND for ratio in numbers(fixed, "smallest gradient / layer above")
    )
    assert all(share < 0.25 for share in numbers(fixed, "most dead units in a layer"))
    assert all(loss < 0.01 for loss in numbers(fixed, "trained loss / ln(C)"))
    # The starter's logits: a first loss of hundreds of times ln(C), activations growing layer by
    # layer (about sqrt(fan-in / 2) each), on every network.
    assert all(ratio > 100 * high for ratio in numbers(broken, "first loss / ln(C)"))
    assert all(size > 3 * ACTIVATION_SIZE[1] for size in numbers(broken, "largest activation size"))
    assert low < 1 < high


@pytest.mark.parametrize("seed", SEEDS)
def test_the_drill_reads_the_judged_start(seed: int) -> None:
    broken, fixed = starter(SLUG, seed), solution(SLUG, seed)
    assert broken.verdict == "too-large" and fixed.verdict == "healthy"
    assert broken.signature["initial_loss_ratio"] > 100  # type: ignore[operator]
    assert fixed.signature["layers_without_gradient"] == 0
    assert fixed.signature["initial_loss_ratio"] == pytest.approx(1.0, abs=0.05)


# -- what the judge hands over, and what it does when a parameter is left unset ---------------


def test_the_networks_arrive_unset_and_the_cases_are_the_exercises() -> None:
    assert CASES == get_exercise(SLUG).cases
    for case in range(len(CASES)):
        model = unset_model(shape_of(case, 7))
        assert all(bool(torch.isnan(parameter).all()) for parameter in model.parameters())


def test_a_bias_left_unset_fails_the_weights_check_and_says_so() -> None:
    code = FILES.code("right_kaiming_uniform").replace("        layer.bias.fill_(0.0)\n", "")
    found = judgement(SLUG, code, 0)
    assert failing_checks(found) == {check.key for check in found.checks}
    weights = next(check for check in found.checks if check.key == "weights")
    assert (
        "0.bias still holds NaN" in weights.message
        and "set each weight and bias" in weights.message
    )
    assert all(c.message.startswith("Not measured") for c in found.checks if c.key != "weights")


def test_a_zero_output_layer_fails_the_step_zero_gradient_only() -> None:
    """A zero output layer trains (its first step makes it non-zero), but at step 0 it sends no
    gradient to any hidden layer: the check asked for is at step 0, and the drill reads the
    same start as dead units."""
    code = FILES.code("right_kaiming_uniform").replace(
        "    layers[-1].weight.div_(10)", "    layers[-1].weight.zero_()"
    )
    found = judgement(SLUG, code, 0)
    assert failing_checks(found) == {"gradients"}
    assert found.verdict == "dead-units"
    assert found.signature["initial_loss_ratio"] == pytest.approx(1.0, abs=1e-6)  # all logits 0
