"""The write-it exercise "labels for a model that shifts them itself" (labels-shift-once) judged
on learner files kept as fixtures (tests/exercises/fixtures/labels_shift_once/), on seed 0: three
correct files written differently from the reference pass every check, and each plausible wrong
file (the old shift kept, a shift the other way, prompt or padding left counting, 0 for -100,
labels that are input_ids itself) fails exactly the checks its mistake breaks."""

import pytest
import torch

from drills.catalog.double_shift_labels.exercises.shift_once.problem import (
    build,
    probe_batches,
)
from drills.exercises.registry import get_exercise
from tests.exercises.judging import LearnerFiles, failing_checks, judgement

SLUG = "labels-shift-once"
FILES = LearnerFiles(SLUG, "labels_shift_once")
MISSES = "and a model trained on the right pairs gets there"

# Wrong file: the checks it fails at seed 0 (every other passes), and what the first says.
WRONG = {
    "wrong_shifted_twice": (
        {"labels-aligned", "loss-at-entropy"},
        "your label is 'B', the input 1 position later",
    ),
    "wrong_shifted_back": (
        {"labels-aligned", "loss-at-entropy"},
        "your label is 'f', the input 1 position earlier",
    ),
    # Training on the prompt as well leaves the response's loss on the text's entropy.
    "wrong_prompt_counted": ({"labels-aligned"}, "96 on prompt or padding positions"),
    # PAD and 'A' as targets cost the response some of its loss: at seed 0, 0.841 and 0.862
    # nats where 0.797 is allowed (at other seeds the first may land inside the band).
    "wrong_padding_counted": (
        {"labels-aligned", "loss-at-entropy"},
        "your label is '·PAD·', the input at that very position",
    ),
    "wrong_zeros_for_masked": (
        {"labels-aligned", "loss-at-entropy"},
        "(a prompt or padding position, input 'c'), your label is 'A'.",
    ),
    # The labels are right and training goes on with the batch itself: only the copy the
    # function was handed shows the -100s written into input_ids.
    "wrong_labels_alias_inputs": (
        {"batch-untouched"},
        "changed 150 positions of input_ids in place (first: sequence 0, position 0, input 'c' "
        "became -100), so the model would be fed -100 there as its input",
    ),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(FILES.right)
    assert len(FILES.right) >= 2
    assert len(WRONG) >= 3


@pytest.mark.parametrize("name", FILES.right)
def test_a_correct_file_written_differently_passes(name: str) -> None:
    found = FILES.judged(name)
    assert found.status == "passed", [check.message for check in found.checks]


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_file_fails_the_checks_its_mistake_breaks(name: str) -> None:
    failing, says = WRONG[name]
    found = FILES.judged(name)
    assert found.status == "failed", found.message
    assert failing_checks(found) == failing
    messages = [check.message for check in found.checks if check.key in failing]
    assert any(says in message for message in messages), messages
    assert all(message.startswith(("Run ", "In run ")) for message in messages), messages
    if "loss-at-entropy" in failing:
        assert any(MISSES in message for message in messages)


def test_a_mask_changed_in_place_is_named() -> None:
    """Folding the response into the attention mask gives the right labels, and a batch whose
    prompt is then hidden from attention wherever the pipeline uses it next."""
    old = "    labels = input_ids.clone()\n"
    code = get_exercise(SLUG).solution
    assert old in code
    found = judgement(SLUG, code.replace(old, old + "    attention_mask.mul_(response_mask)\n"))
    assert failing_checks(found) == {"batch-untouched"}
    said = next(check.message for check in found.checks if check.key == "batch-untouched")
    assert "positions of attention_mask in place" in said
    assert "the pipeline uses the batch again after your function returns" in said


def test_the_probes_the_function_is_handed_are_copies_of_the_batch() -> None:
    problem = build(0)
    for batch in probe_batches(problem.source, 0):
        copy = batch.copy()
        assert copy.input_ids is not batch.input_ids
        copy.input_ids.fill_(-100)
        copy.response_mask.fill_(False)
        assert bool((batch.input_ids >= 0).all()) and bool(batch.response_mask.any())
        stacked = batch.stacked()
        assert stacked.dtype == torch.int64 and stacked.shape == (3, *batch.input_ids.shape)
