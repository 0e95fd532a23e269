"""The gradient-check fix judged on learner files kept as fixtures
(tests/exercises/fixtures/gradient_check_smooth_l1_backward/), on seeds 0-4, the seeds its
thresholds were set from: right backwards written differently from the reference pass every
check and read "correct", and each plausible wrong fix (the tempting ones: right at the
self-test's beta only, a gradient of zeros, a gradient scaled by a constant, NaN on a log with
no real step) fails exactly the checks its mistake breaks, with the reason in its message.
Then the bands the thresholds sit in, the judge's probes, and files it refuses."""

import subprocess
import sys
from collections.abc import Mapping

import pytest
import torch

from drills.catalog.gradient_check.exercises.smooth_l1_backward.problem import (
    BETA,
    EDGE,
    PROBES,
    build,
)
from drills.exercises.judge import hidden_seeds
from drills.exercises.registry import get_exercise
from tests.exercises.judging import SEEDS, LearnerFiles, judgement, solution, starter

SLUG = "gradient-check-smooth-l1-backward"
FILES = LearnerFiles(SLUG, "gradient_check_smooth_l1_backward")
RIGHT = FILES.right
RUNS = ("run A", "run B")
BETAS = [beta for _, _, beta in PROBES]

# Wrong file: the checks it fails (every other passes), the check that names the mistake, and
# what that check's message says.
WRONG = {
    # Right at beta = 1 only: 0.25 times the slope below beta 0.25. It trains 0.99-1.04 times
    # the reference's held-out loss, so only the gradient check sees it.
    "wrong_mask_only": (
        {"gradient-real"},
        "gradient-real",
        "0.25 times the true gradient at every real step in that part",
    ),
    # clamp(x, -1, 1): smooth L1's gradient at beta = 1. Off most right next to beta 0.25, on
    # one side or the other.
    "wrong_clamp_slope": ({"gradient-real"}, "gradient-real", "beta, just "),
    # mask / mask.sum(dim=1): 0 / 0 on the log with no real step, then NaN weights.
    "wrong_unclamped_counts": (
        {"gradient-padding", "weights", "learns"},
        "gradient-padding",
        "on a padded step of a log with no real step, your backward gives pred a gradient of nan",
    ),
    # The gradient times the number of logs: Adam trains exactly as well, the gradient is not
    # the loss's.
    "wrong_no_mean_over_logs": (
        {"gradient-real"},
        "gradient-real",
        "at every real step yours is 5 times the true gradient: the same direction",
    ),
    # Zeros: right on padding, and nothing learns.
    "wrong_zero_gradient": (
        {"gradient-real", "learns"},
        "gradient-real",
        "at every real step yours is 0: no gradient reaches the model",
    ),
}


def number(found: Mapping[str, object], key: str) -> float:
    value = found[key]
    assert isinstance(value, int | float), (key, value)
    return float(value)


def gradient_errors(found: Mapping[str, object], where: str) -> list[float]:
    return [
        number(found, f"gradient error, {where} steps, beta {beta:g} ({run})")
        for beta in BETAS
        for run in RUNS
    ]


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_backward_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "correct"
    # float64 throughout: 2.5e-16; step weights rounded through float32: 5.3e-8.
    assert max(gradient_errors(found.measurements, "real")) < 1e-7
    assert max(gradient_errors(found.measurements, "padded")) == 0.0
    for run in RUNS:
        ratio = number(found.measurements, f"held-out loss / true gradient's ({run})")
        assert ratio == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, key, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    named = next(check for check in found.checks if check.key == key)
    assert says in named.message, named.message
    assert found.verdict == "wrong-backward"  # the drill reads the judge's gradient check


@pytest.mark.parametrize("seed", SEEDS)
def test_a_slip_at_other_betas_trains_like_the_true_gradient(seed: int) -> None:
    """Why training cannot be the only check: these end near the reference's held-out loss."""
    for name, low, high in (
        ("wrong_mask_only", 0.98, 1.06),
        ("wrong_clamp_slope", 0.98, 1.06),
        ("wrong_no_mean_over_logs", 0.9999, 1.0001),
    ):
        found = FILES.judged(name, seed).measurements
        for run in RUNS:
            assert low <= number(found, f"held-out loss / true gradient's ({run})") <= high
    scaled = gradient_errors(FILES.judged("wrong_no_mean_over_logs", seed).measurements, "real")
    assert max(scaled) == pytest.approx(0.8)  # 5 logs with a real step: 5 times, |5 - 1| / 5
    zero = FILES.judged("wrong_zero_gradient", seed).measurements
    for run in RUNS:  # 3.1-6.5 times
        assert number(zero, f"held-out loss / true gradient's ({run})") > 2.5


# -- the bands the thresholds were set from (drills/.../smooth_l1_backward/checks.py) ----------


@pytest.mark.parametrize("seed", SEEDS)
def test_gradient_check_bands(seed: int) -> None:
    broken = starter(SLUG, seed).measurements
    fixed = solution(SLUG, seed).measurements
    assert max(gradient_errors(fixed, "real")) < 1e-12
    assert max(gradient_errors(fixed, "padded")) == 0.0
    for run in RUNS:
        # The starter's slope of x where x / beta is due: off by up to 1 - beta below beta;
        # nothing at beta = 1, the self-test's, which is why the self-test passes.
        assert broken[f"gradient error, real steps, beta 0.25 ({run})"] == pytest.approx(
            0.75, abs=1e-3
        )
        assert number(broken, f"gradient error, real steps, beta 1 ({run})") < 1e-12
        assert broken[f"gradient error, real steps, beta 2 ({run})"] == pytest.approx(0.5)
        assert broken[f"gradient error, padded steps, beta 1 ({run})"] == pytest.approx(1.0)
        # Padded steps given a gradient: 1.17-1.86 times the reference's held-out loss.
        assert number(broken, f"held-out loss / true gradient's ({run})") > 1.15
        ratio = number(fixed, f"held-out loss / true gradient's ({run})")
        assert ratio == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_probes_cover_what_the_self_test_missed(seed: int) -> None:
    exercise = get_exercise(SLUG)
    for case, hidden in enumerate(hidden_seeds(exercise, seed)):
        for probe in build(case, hidden).probes:
            counts = probe.mask.sum(dim=1)
            assert int((counts == 0).sum()) == 1 and int((counts == probe.mask.shape[1]).sum()) >= 1
            size = (probe.pred - probe.target).abs()[probe.mask]
            edge = (size - probe.beta).abs() <= EDGE * probe.beta
            assert int((size < probe.beta).sum()) >= 3 and int((size >= probe.beta).sum()) >= 3
            assert int((edge & (size < probe.beta)).sum()) >= 1
            assert int((edge & (size >= probe.beta)).sum()) >= 1
            assert abs(probe.grad_output) >= 0.5 and probe.grad_output != 1.0
        assert sorted(probe.beta for probe in build(case, hidden).probes) == sorted(BETAS)
    assert BETA in BETAS and 1.0 in BETAS


def test_a_backward_that_ignores_grad_output_is_named() -> None:
    code = get_exercise(SLUG).solution.replace(
        "return grad_output * grad, None, None, None", "return grad, None, None, None"
    )
    found = judgement(SLUG, code, 0)
    real = next(check for check in found.checks if check.key == "gradient-real")
    assert real.status == "fail"
    assert "a backward must multiply by the grad_output it is handed" in real.message


def test_a_plain_function_in_its_place_is_refused() -> None:
    code = get_exercise(SLUG).solution.replace(
        "class MaskedSmoothL1(torch.autograd.Function):", "class MaskedSmoothL1:"
    )
    found = judgement(SLUG, code, 0)
    assert found.status == "error"
    assert found.message and "must stay a torch.autograd.Function" in found.message


def test_the_self_tests_pass_as_the_story_says() -> None:
    """The starter's gradcheck (beta = 1, no padding) passes the broken backward; the solution's
    (beta = 0.3, padded steps, a log with none) passes the right one."""
    folder = get_exercise(SLUG).folder
    for name in ("starter.py", "solution.py"):
        ran = subprocess.run(
            [sys.executable, f"{folder}/{name}"], capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, ran.stderr
        assert "gradcheck passed: True" in ran.stdout


def test_torch_agrees_with_the_plain_loss() -> None:
    """The judge's reference is torch's smooth L1 per step: check it once against the formula."""
    diff = torch.tensor([[-3.0, -0.2, 0.0, 0.1, 0.3]], dtype=torch.float64)
    loss = torch.nn.functional.smooth_l1_loss(
        diff, torch.zeros_like(diff), reduction="none", beta=0.25
    )
    expected = torch.where(diff.abs() < 0.25, 0.5 * diff**2 / 0.25, diff.abs() - 0.125)
    assert torch.allclose(loss, expected, rtol=0, atol=1e-15)
