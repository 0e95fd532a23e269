"""The honest-split fix judged on learner files kept as fixtures
(tests/exercises/fixtures/group_leakage_honest_split/), on seeds 0-4: right splits written
differently from the reference pass every check and read "honest", and each plausible wrong fix
fails exactly the checks its mistake lets through, with a message in the learner's terms."""

import pytest

from tests.exercises.judging import SEEDS, LearnerFiles, failing_checks, judgement, solution

SLUG = "group-leakage-honest-split"
FILES = LearnerFiles(SLUG, "group_leakage_honest_split")
RIGHT = FILES.right

# Wrong file: the checks it fails (every other passes) and what the first of them says.
WRONG = {
    # No row occurs twice: the exact search moves nothing, users and copies both cross.
    "wrong_exact_dedupe": ({"users-apart", "no-near-copies"}, "written by users who also"),
    # A copy posted from another account is another user: the copies cross.
    "wrong_split_by_user": ({"no-near-copies"}, "closer than 0.2"),
    # The copies are gone, a user's other reviews are not copies: the users cross.
    "wrong_near_dedupe_by_row": ({"users-apart"}, "written by users who also"),
    # Sorted by account, the newest accounts (the re-posters) all land in validation.
    "wrong_last_quarter_of_ids": ({"no-near-copies"}, "closer than 0.2"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 2


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_split_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "honest"
    assert found.signature["shared_share"] == 0.0


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == breaks
    first = next(check for check in found.checks if check.key in breaks)
    assert says in first.message, first.message
    assert found.verdict != "honest"  # the drill's audits flag the trained split too


@pytest.mark.parametrize("seed", SEEDS)
def test_the_judge_trains_on_the_split_it_audits(seed: int) -> None:
    """The solution's trained run: every audit finds nothing, and the model scores validation
    and users nowhere in the split within the floors the drill knows."""
    signature = solution(SLUG, seed).signature

    def number(key: str) -> float:
        value = signature[key]
        assert isinstance(value, int | float)
        return float(value)

    assert number("exact_matches") == number("shared_user_rows") == 0
    assert number("near_copies_found") == 0
    assert number("final_val_loss") > number("unseen_floor")
    assert number("unseen_loss") > number("unseen_floor")
    share = number("val_rows") / (number("val_rows") + number("train_rows"))
    assert 0.15 <= share <= 0.35


def test_an_empty_validation_set_fails_the_size_check() -> None:
    code = FILES.code("right_union_find").replace(
        "    return torch.tensor(validation, dtype=torch.int64)",
        "    return torch.tensor(validation[:3], dtype=torch.int64)",
    )
    assert "validation-size" in failing_code(code)


def failing_code(code: str) -> set[str]:
    return failing_checks(judgement(SLUG, code, 0))
