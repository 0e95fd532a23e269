"""The write-it exercise "write it twice" (write-it-twice) judged on learner files kept as fixtures
(tests/exercises/fixtures/write_it_twice/): two correct files written differently from the
reference pass every check, and each plausible wrong file (a misreading both versions share, a
vectorised version wrong in one way, a compare() that cannot catch what it should) fails exactly
the checks its mistake breaks. The judge's truth is checked against the definitions written
out element by element, each hidden batch against the corner it is meant to stress, and each
planted version against the input that is meant to show its fault."""

from __future__ import annotations

import math

import pytest
import torch

from drills.catalog.variable_length_loss.exercises.write_it_twice import problem
from drills.exercises.registry import get_exercise
from tests.exercises.judging import LearnerFiles, failing_checks, judgement, numbers

SLUG = "write-it-twice"
FILES = LearnerFiles(SLUG, "write_it_twice")
SEEDS = range(8)

# Wrong file: the checks it fails (every other passes) and what the first failure says.
WRONG = {
    "wrong_padded_length": (
        {"per-sequence", "overall"},
        "which is not the mean of its real losses: it is their sum over the padded length",
    ),
    "wrong_nan_empty_rows": (
        {"empty-rows"},
        "which has no real token, nan; it must give 0",
    ),
    "wrong_mean_of_means": (
        {"overall"},
        "it is the average of the rows' means, where each row weighs the same",
    ),
    "wrong_times_mask": (
        {"padding-ignored"},
        "when the padding held inf and NaN than when it held zeros",
    ),
    "wrong_float32_math": (
        {"dtype"},
        "masked_means() matches the means of float64 losses only to about float32's precision",
    ),
    "wrong_loop_twice": (
        {"written-twice"},
        "a vectorised version handles every row at once",
    ),
    "wrong_compare_to_itself": (
        {"compare-catches"},
        "your compare returned True for a version that divides each row's sum by the padded",
    ),
    "wrong_compare_loose": (
        {"compare-catches"},
        "your compare returned True for a version that",
    ),
    # Bit-for-bit equality rejects the correct versions; at seed 0 it also rejects a wrong one
    # on a batch where that one is right (a rounding difference came first), which shows
    # nothing. (At other seeds the fault may come first: the second key depends on the draw.)
    "wrong_compare_exact": (
        {"compare-accepts", "compare-catches"},
        "your compare returned False for a correct vectorised version",
    ),
    "wrong_compare_nan_blind": (
        {"compare-catches"},
        "your compare returned True for a version that gives NaN for a row with no real token",
    ),
    "wrong_compare_easy_batches": (
        {"compare-catches"},
        "your compare returned True for a version that gives NaN for a row with no real token",
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
    assert all(message.startswith("In case '") for message in messages)


def test_the_solution_measures_the_loop_and_the_vectorised_version_apart() -> None:
    found = judgement(SLUG, get_exercise(SLUG).solution)
    lines = found.measurements
    loop = [int(n) for n in str(lines["lines the loop ran (2 x 4, 16 x 32)"]).split(", ")]
    fast = [
        int(n) for n in str(lines["lines the vectorised version ran (2 x 4, 16 x 32)"]).split(", ")
    ]
    assert loop[1] > 10 * loop[0] > 0  # the reference loops over every token
    assert fast[0] == fast[1] > 0
    assert numbers(found)["real tokens (a batch with no real token)"] == 0


# -- the format, and a compare() that keeps the judge's versions -----------------------------


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            (
                "    return sums / counts.clamp(min=1), sums.sum() / counts.sum().clamp(min=1)\n",
                "    return {'per_sequence': sums}\n",
            ),
            "masked_means() returned dict; it must return a pair of tensors",
        ),
        (
            (
                "    return sums / counts.clamp(min=1), sums.sum() / counts.sum().clamp(min=1)\n",
                "    return (sums / counts.clamp(min=1))[:, None], sums.sum()\n",
            ),
            "masked_means() returned per_sequence of shape",
        ),
        (
            (
                "    return sums / counts.clamp(min=1), sums.sum() / counts.sum().clamp(min=1)\n",
                "    return counts, sums.sum()\n",
            ),
            "masked_means() returned per_sequence as torch.int64; use a float tensor",
        ),
    ],
    ids=["dict", "column", "int64"],
)
def test_a_file_that_breaks_the_format_is_told_how(change: tuple[str, str], says: str) -> None:
    code = get_exercise(SLUG).solution
    assert change[0] in code
    found = judgement(SLUG, code.replace(*change))
    assert found.status == "error"
    assert found.message and says in found.message
    assert {check.status for check in found.checks} == {"error"}


def test_a_compare_that_answers_anything_but_a_bool_is_told_so() -> None:
    code = get_exercise(SLUG).solution.replace("    return True\n", "    return 1\n")
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"compare-accepts"}
    assert "your compare returned int for a correct vectorised version, not True or False" in (
        " ".join(check.message for check in found.checks)
    )


def test_a_compare_that_always_says_no_shows_nothing() -> None:
    code = get_exercise(SLUG).solution.replace("    return True\n", "    return False\n")
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"compare-accepts"}
    # Its False for each wrong version stands: a batch that shows the fault came first. A
    # compare() that says False before it calls anything shows nothing, and is told so.
    code = get_exercise(SLUG).solution.replace(
        "    for trial in range(300):\n", "    return False\n    for trial in range(300):\n"
    )
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"compare-accepts", "compare-catches"}
    said = next(check.message for check in found.checks if check.key == "compare-catches")
    assert "on no input it handed that version does it differ from a correct one" in said


def test_the_judges_versions_work_only_while_compare_runs() -> None:
    """A compare() that keeps the correct version it was handed cannot answer with it later."""
    code = (
        get_exercise(SLUG)
        .solution.replace(
            "def compare(loop: Version, vectorised: Version) -> bool:\n",
            "KEPT: list[Version] = []\n\n\n"
            "def compare(loop: Version, vectorised: Version) -> bool:\n"
            "    KEPT.append(vectorised)\n",
        )
        .replace(
            "    kept = torch.where(mask, losses, torch.zeros_like(losses))",
            "    if KEPT:\n        return KEPT[0](losses, mask)\n"
            "    kept = torch.where(mask, losses, torch.zeros_like(losses))",
        )
    )
    found = judgement(SLUG, code)
    assert found.status == "error"
    assert found.message and "work only while compare() runs" in found.message


# -- the judge's own truths -----------------------------------------------------------------


def by_the_definition(losses: torch.Tensor, mask: torch.Tensor) -> tuple[list[float], float]:
    """The docstring's definitions, one element at a time, in Python floats."""
    rows, width = mask.shape
    means, total, count = [], 0.0, 0
    for b in range(rows):
        real = [float(losses[b, t]) for t in range(width) if bool(mask[b, t])]
        means.append(math.fsum(real) / len(real) if real else 0.0)
        total, count = total + math.fsum(real), count + len(real)
    return means, total / count if count else 0.0


@pytest.mark.parametrize("case", range(len(problem.KINDS)))
def test_the_truth_agrees_with_the_definitions_and_each_batch_stresses_its_corner(
    case: int,
) -> None:
    kind = problem.KINDS[case]
    for seed in SEEDS:
        batch = problem.build(case, seed)
        per_sequence, overall = problem.reference(batch.losses, batch.mask)
        means, total = by_the_definition(batch.losses, batch.mask)
        assert per_sequence.tolist() == pytest.approx(means, rel=1e-12, abs=1e-12)
        assert float(overall) == pytest.approx(total, rel=1e-12, abs=1e-12)
        counts = batch.mask.sum(dim=1)
        rows, width = batch.mask.shape
        padding = ~batch.mask
        assert bool(torch.isfinite(batch.losses).all())
        assert bool((batch.losses[batch.mask] >= 0).all())
        assert batch.losses.dtype == (
            torch.float64 if kind in ("one-sequence", "large-float64") else torch.float32
        )
        assert (rows == 1) == (kind == "one-sequence")
        assert (width == 1) == (kind == "length-one")
        assert bool((counts == 0).any()) == (kind in ("empty-rows", "length-one", "none"))
        assert (int(counts.sum()) == 0) == (kind == "none")
        assert (batch.garbage is not None) == (kind == "garbage")
        if kind not in ("length-one", "none"):
            assert bool(padding.any())
            assert bool((batch.losses[padding] != 0).any()) == (kind != "garbage")
        if batch.garbage is not None:
            assert torch.equal(batch.garbage[batch.mask], batch.losses[batch.mask])
            assert not bool(torch.isfinite(batch.garbage[padding]).any())


def test_each_hidden_run_has_a_batch_and_a_planted_version() -> None:
    exercise = get_exercise(SLUG)
    assert len(problem.KINDS) == len(problem.PLANTED) == len(exercise.cases)
    assert [planted.right for planted in problem.PLANTED].count(True) == 2


def awkward_batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    found = []
    for rows, width in ((1, 1), (1, 5), (4, 1), (3, 6), (6, 3)):
        for dtype in (torch.float32, torch.float64):
            mask = torch.rand(rows, width, generator=generator) < 0.5
            losses = torch.rand(rows, width, generator=generator, dtype=dtype) * 9
            found.append((losses, mask))
            junk = torch.full_like(losses, float("nan"))
            found.append((torch.where(mask, losses, junk), mask))
    return found


def test_the_correct_versions_agree_with_the_truth_everywhere() -> None:
    for planted in [p for p in problem.PLANTED if p.right]:
        for losses, mask in awkward_batches():
            assert not problem.differs(losses, mask, planted.version)
            assert not problem.differs(losses, mask, problem.by_rows)
            got, truth = planted.version(losses, mask), problem.reference(losses, mask)
            assert got[0].dtype == got[1].dtype == losses.dtype
            assert torch.allclose(got[0].double(), truth[0], rtol=1e-6)


# For each wrong version: a batch that shows its fault, and one it gets right.
SHOWN = {
    "padded_length": (([[1.0, 2.0, 7.0]], [[True, True, False]]), ([[1.0, 2.0]], [[True, True]])),
    "nan_when_empty": (([[1.0], [2.0]], [[True], [False]]), ([[1.0], [2.0]], [[True], [True]])),
    "mean_of_means": (
        ([[1.0, 2.0], [6.0, 5.0]], [[True, False], [True, True]]),
        ([[1.0, 2.0], [6.0, 5.0]], [[True, True], [True, True]]),
    ),
    "times_mask": (
        ([[1.0, float("inf")]], [[True, False]]),
        ([[1.0, 40.0]], [[True, False]]),
    ),
    "squeezed": (([[1.0, 2.0]], [[True, True]]), ([[1.0, 2.0], [3.0, 4.0]], [[True] * 2] * 2)),
}


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_each_wrong_version_is_shown_by_its_input_and_only_by_it(name: str) -> None:
    planted = next(p for p in problem.PLANTED if p.version.__name__ == name)
    assert not planted.right and planted.shows
    (bad, bad_mask), (fine, fine_mask) = SHOWN[name]
    for dtype in (torch.float32, torch.float64):
        shown = torch.tensor(bad, dtype=dtype), torch.tensor(bad_mask)
        kept = torch.tensor(fine, dtype=dtype), torch.tensor(fine_mask)
        assert problem.differs(*shown, planted.version)
        assert not problem.differs(*kept, planted.version)


def test_a_nan_where_a_mean_is_due_is_named_as_such() -> None:
    old = "    return sums / counts.clamp(min=1), sums.sum() / counts.sum().clamp(min=1)\n"
    code = get_exercise(SLUG).solution.replace(
        old, "    return sums * float('nan'), sums.sum() / counts.sum().clamp(min=1)\n"
    )
    found = judgement(SLUG, code)
    said = next(check.message for check in found.checks if check.key == "per-sequence")
    assert "masked_means() gave row 0" in said and "it is nan where a number is due" in said
    # NaN with zeros in the padding and NaN with junk there: the padding changed nothing.
    assert failing_checks(found) == {"per-sequence", "empty-rows"}
