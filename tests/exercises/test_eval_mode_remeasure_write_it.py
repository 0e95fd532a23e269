"""The write-it exercise "re-measure the training set the way validation is measured"
(eval-mode-remeasure) judged on learner files kept as fixtures
(tests/exercises/fixtures/eval_mode_remeasure/), on seeds 0-4: three correct files written
differently from the reference pass every check, and each plausible wrong file (dropout left on,
the mode not put back or always put back to train, a loss on the graph, a mean of chunk means)
fails exactly the checks its mistake breaks."""

import pytest
import torch

from drills.catalog.val_below_train.exercises.eval_mode_remeasure.checks import PROBE_TOLERANCE
from drills.catalog.val_below_train.exercises.eval_mode_remeasure.problem import (
    build,
    handed_in_train_mode,
    mode_probe,
)
from drills.exercises.registry import get_exercise
from tests.exercises.judging import SEEDS, LearnerFiles

SLUG = "eval-mode-remeasure"
FILES = LearnerFiles(SLUG, "eval_mode_remeasure")
DROPOUT_ON = "It falls where losses measured with dropout still active fall."
OFF = "than the training set's loss measured like validation, by more than rounding can explain"
LEFT_IN_EVAL = "the model behaved as it does in eval mode, so the training that carries on"

# Wrong file: the checks it fails on every seed (every other passes), and what the first says.
WRONG = {
    "wrong_dropout_still_on": ({"eval-mode-loss"}, DROPOUT_ON),
    "wrong_eval_not_called": ({"eval-mode-loss"}, DROPOUT_ON),
    "wrong_left_in_eval_mode": ({"restores-the-mode"}, LEFT_IN_EVAL),
    # model.training stays True, but a rate of 0 is dropout switched off all the same.
    "wrong_dropout_rate_zeroed": ({"restores-the-mode"}, LEFT_IN_EVAL),
    # Run B hands the model over in eval mode: model.train() at the end switches dropout on.
    "wrong_train_mode_forced_after": (
        {"restores-the-mode"},
        "run B: the model came in eval mode, as a validation routine hands it over, and your "
        "function left it in train mode",
    ),
    "wrong_loss_on_the_graph": (
        {"returns-a-number", "eval-mode-loss"},
        "returned Tensor of shape [] attached to a graph (requires_grad=True)",
    ),
    "wrong_mean_of_chunk_means": ({"eval-mode-loss"}, OFF),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(FILES.right)
    assert len(FILES.right) >= 2
    assert len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", FILES.right)
def test_a_correct_file_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_file_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    failing, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == failing
    messages = [check.message for check in found.checks if check.key in failing]
    assert any(says in message for message in messages), messages
    assert all(message.startswith("run ") for message in messages), messages


def test_the_hidden_runs_hand_the_model_over_in_both_modes() -> None:
    cases = range(len(get_exercise(SLUG).cases))
    assert {handed_in_train_mode(case) for case in cases} == {True, False}
    assert handed_in_train_mode(0)  # the run the signature is read from: as training has it


@pytest.mark.parametrize("seed", SEEDS)
def test_the_mode_probe_tells_the_two_modes_apart(seed: int) -> None:
    problem = build(seed)
    model = problem.model
    in_train = mode_probe(model, problem, seed)
    assert torch.equal(in_train, mode_probe(model, problem, seed))  # fixed dropout draws
    model.eval()
    in_eval = mode_probe(model, problem, seed)
    assert float((in_train - in_eval).abs().max()) > 1000 * PROBE_TOLERANCE
