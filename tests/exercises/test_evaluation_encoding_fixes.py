"""The evaluation-encoding fix judged on learner files kept as fixtures
(tests/exercises/fixtures/evaluation_encodes_like_training/), on seeds 0-4: right encoders
written differently from the reference pass every check, and each plausible wrong fix fails
exactly the checks its mistake breaks, with a message in the learner's terms. Then the two
kinds of hidden run, and the ids the judge compares, measured apart."""

import pytest

from tests.exercises.judging import SEEDS, LearnerFiles, solution, starter, statuses

SLUG = "evaluation-encodes-like-training"
FILES = LearnerFiles(SLUG, "evaluation_encodes_like_training")
RIGHT = FILES.right

# Wrong file: the checks it fails (every other passes) and what the same-ids message says.
WRONG = {
    # Capitalised words stay <unk>: measured 25-29% right.
    "wrong_start_token_only": ({"same-ids", "scores-like-training"}, '"<bos> <unk> '),
    # Every token one place late: 18-28% right.
    "wrong_lowercase_only": ({"same-ids", "scores-like-training"}, '"<bos> <bos> '),
    # Right on tickets as usually written, every word <unk> on tickets typed in capitals.
    "wrong_first_letters_only": (
        {"same-ids", "scores-like-training"},
        "In tickets typed in capitals, 100%",
    ),
    # The end token lost: other ids on every ticket, at no cost in accuracy to this router.
    "wrong_end_token_dropped": ({"same-ids"}, "In tickets as written, 100%"),
    # The two paths agree with each other, not with what the router was trained on.
    "wrong_training_side_changed": ({"same-ids", "scores-like-training"}, '"<bos> <unk> '),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 2


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_encoder_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "healthy"
    assert found.signature["ids_differ_share"] == 0.0


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    same = next(check for check in found.checks if check.key == "same-ids")
    assert says in same.message, same.message


@pytest.mark.parametrize("seed", SEEDS)
def test_the_bands_as_the_judge_measures_them(seed: int) -> None:
    # The router the judge trains gets every ticket right encoded the training way; the
    # starter's ids leave it near chance (measured 18-28%), far outside SCORE_BAND (0.02).
    for found in (solution(SLUG, seed), starter(SLUG, seed)):
        accuracies = found.measurements
        assert all(value == 1.0 for key, value in accuracies.items() if "training code" in key), (
            accuracies
        )
    broken = starter(SLUG, seed)
    yours = [float(v) for k, v in broken.measurements.items() if "your ids" in k and v is not None]
    assert len(yours) == 2 and all(0.15 < value < 0.35 for value in yours)
    # The drill reads the starter's run as the mismatch: the same tickets encoded the training
    # way score 100%, its own encoding a quarter, one token longer on every ticket.
    assert broken.signature["ids_differ_share"] == 1.0
    assert broken.signature["length_change"] == 1.0
    assert broken.signature["reencoded_accuracy"] == 1.0


def test_the_end_token_shows_in_the_ids_not_in_the_score() -> None:
    """Why the ids are compared exactly: an encoder that loses <eos> costs this router nothing
    on these tickets, and it is still not what the router was trained on."""
    found = FILES.judged("wrong_end_token_dropped")
    assert statuses(found)["scores-like-training"] == "pass"
    assert found.signature["length_change"] == -1.0
    assert found.verdict == "inconclusive"
