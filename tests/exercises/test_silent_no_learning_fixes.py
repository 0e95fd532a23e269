"""The silent-no-learning fix judged on learner files kept as fixtures
(tests/exercises/fixtures/silent_no_learning_gradient_panel/), on seeds 0-4: right loops written
differently from the reference pass every check and read "healthy", and each plausible wrong fix
(a larger rate, the gradients zeroed instead of dropped, zero_grad() right after backward, no
clearing at all) fails the checks its mistake breaks, with the reason in its message. Then the
bands the thresholds were set from, and the judge's own replay of plain SGD."""

import pytest
import torch
import torch.nn.functional as F

from drills.catalog.silent_no_learning.exercises.gradient_panel.checks import (
    FALLS_TO,
    STEP_TOLERANCE,
)
from drills.catalog.silent_no_learning.exercises.gradient_panel.problem import (
    CONFIG,
    SHORT,
    build,
    fresh_model,
    replay,
)
from drills.exercises.contract import Judgement
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    numbers,
    signed,
    solution,
    starter,
)

SLUG = "silent-no-learning-gradient-panel"
FILES = LearnerFiles(SLUG, "silent_no_learning_gradient_panel")
RIGHT = FILES.right
RUNS = ("run A", "run B")
NO_STEP = {"every-parameter-moves", "own-batch-steps", "loss-falls"}

# Wrong file: (the checks it fails on every seed, those it may fail as well, the check whose
# message is read, what that message says, the drill's reading of the first run).
WRONG = {
    # The panel still drops every .grad before the step: at any rate, nothing moves.
    "wrong_raises_the_rate": (
        NO_STEP,
        set(),
        "every-parameter-moves",
        "the steps never received it",
        "no-step",
    ),
    # The step runs on every parameter now, with a gradient of zeros.
    "wrong_zeros_instead_of_freeing": (
        NO_STEP,
        set(),
        "own-batch-steps",
        "left every weight where it was",
        "no-step",
    ),
    # Cleared in the very place the panel cleared them.
    "wrong_zero_grad_after_backward": (
        NO_STEP,
        set(),
        "every-parameter-moves",
        "not one parameter moved",
        "no-step",
    ),
    # Every step follows the running sum of the gradients: it moves everything and the loss
    # may fall (to 0.45-0.95 of its start on seeds 0-4), but the second step is not its batch's.
    "wrong_never_clears": (
        {"own-batch-steps"},
        {"loss-falls"},
        "own-batch-steps",
        "the first batch's gradient plus the second's",
        "accumulating",
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
    always, sometimes, read, says, verdict = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert always <= FILES.failing(name, seed) <= always | sometimes
    check = next(check for check in found.checks if check.key == read)
    assert says in check.message, check.message
    assert found.verdict == verdict


# -- the bands the thresholds were set from (drills/.../gradient_panel/checks.py) -------------


def measured(found: Judgement, what: str) -> list[float]:
    """One measurement per hidden run."""
    values = numbers(found)
    return [values[f"{what} ({run})"] for run in RUNS]


@pytest.mark.parametrize("seed", SEEDS)
def test_step_and_loss_bands(seed: int) -> None:
    broken, fixed = starter(SLUG, seed), solution(SLUG, seed)
    never = FILES.judged("wrong_never_clears", seed)
    # A wired loop is plain SGD to float32's rounding, far inside the band; one that does not
    # move is off by exactly its whole length; one that never clears, by a large share of it.
    assert all(off < STEP_TOLERANCE / 10 for off in measured(fixed, "two steps off SGD's"))
    assert measured(broken, "two steps off SGD's") == [1.0, 1.0]
    assert all(off > 0.1 for off in measured(never, "two steps off SGD's"))
    # The reference ends far under the band; a loop whose steps get nothing, exactly at 1.
    assert all(ratio < FALLS_TO / 1.5 for ratio in measured(fixed, "trained loss / first loss"))
    assert measured(broken, "trained loss / first loss") == [1.0, 1.0]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_drill_reads_the_judged_runs(seed: int) -> None:
    broken, fixed = signed(starter(SLUG, seed)), signed(solution(SLUG, seed))
    never = signed(FILES.judged("wrong_never_clears", seed))
    # Every parameter has a gradient to give (the judge's own backward), and none moved.
    assert (broken["moved"], broken["grad_finite"], broken["parameters"]) == (0, 6, 6)
    assert broken["final_loss"] == pytest.approx(broken["initial_loss"], rel=1e-9)
    assert (fixed["moved"], fixed["stale_grad_steps"]) == (6, 0)
    assert fixed["final_loss"] < 0.5 * fixed["initial_loss"]
    assert (never["moved"], never["stale_grad_steps"]) == (6, 1)


def test_a_loop_at_another_rate_fails_the_step_check_only_and_says_how_far() -> None:
    """Twice the rate still trains every parameter and the loss falls: only the replayed steps
    show that these are not the steps at the rate train() was given."""
    code = FILES.code("right_plots_after_the_step").replace("lr=lr)", "lr=2 * lr)")
    found = judgement(SLUG, code, 0)
    assert failing_checks(found) == {"own-batch-steps"}
    check = next(check for check in found.checks if check.key == "own-batch-steps")
    assert "times as far as two plain SGD steps" in check.message, check.message


# -- the judge's replay ------------------------------------------------------------------------


def test_the_replay_is_plain_sgd_on_each_batch() -> None:
    """The float64 replay ends where torch's own SGD ends, step by step in float64, and the
    never-cleared replay differs from it from the second step on, not at the first."""
    problem = build(11)
    model = fresh_model(problem).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG.lr)
    for features, labels in problem.batches[:SHORT]:
        optimizer.zero_grad()
        F.cross_entropy(model(features.double()), labels).backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    initial = dict(problem.model.state_dict())
    replayed = replay(initial, problem.batches[:SHORT])
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(replayed[name], tensor, rtol=1e-12, atol=1e-12)
    one = problem.batches[:1]
    for name, tensor in replay(initial, one, cleared=False).items():
        torch.testing.assert_close(tensor, replay(initial, one)[name], rtol=0, atol=0)
    summed = replay(initial, problem.batches[:SHORT], cleared=False)
    assert any(not torch.allclose(summed[name], replayed[name]) for name in replayed)


def test_a_loop_that_leaves_a_layer_out_is_named_by_its_parameters() -> None:
    """The first layer left out of the optimizer: the others move and the loss may fall, but the
    move check names the two tensors that stayed, and the replayed steps differ."""
    code = FILES.code("right_plots_after_the_step").replace(
        "SGD(model.parameters(), lr=lr)", "SGD(list(model.parameters())[2:], lr=lr)"
    )
    found = judgement(SLUG, code, 0)
    assert {"every-parameter-moves", "own-batch-steps"} <= failing_checks(found)
    check = next(check for check in found.checks if check.key == "every-parameter-moves")
    assert "hidden1.bias, hidden1.weight did not move" in check.message, check.message
    assert (signed(found)["moved"], signed(found)["parameters"]) == (4, 6)
