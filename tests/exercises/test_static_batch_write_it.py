"""The static-batch check and the seeded overfit (static-batch-seeded-overfit), judged on
learner files kept as fixtures (tests/exercises/fixtures/static_batch_seeded_overfit/) on seeds
0-4: right files written differently from the reference pass every check, and each plausible
wrong file fails exactly the checks its mistake breaks, with a message in the learner's terms.
Then the judge's truths, against the hidden loaders iterated here by hand, and the checks that
no fixture breaks, on files edited for the purpose."""

import random
from pathlib import Path

import pytest
import torch

from drills.catalog.overfit_one_batch.exercises.static_batch import checks, problem
from drills.exercises.judge import hidden_seeds
from drills.exercises.registry import get_exercise
from tests.exercises.judging import SEEDS, failing_checks, judgement, numbers, solution

SLUG = "static-batch-seeded-overfit"
FOLDER = Path(__file__).parent / "fixtures" / "static_batch_seeded_overfit"
RIGHT = sorted(path.stem for path in FOLDER.glob("right_*.py"))

# Wrong file: the checks it fails (every other passes) and what the first of them says.
WRONG = {
    "wrong_shapes_only": (
        {"detects-change"},
        "In case 'a shuffling loader' your check said the batch is the same on two passes",
    ),
    # The first pass kept by reference: only the loader that changes its tensor in place fools it.
    "wrong_compares_to_itself": (
        {"detects-change"},
        "In case 'a batch changed in place' your check said the batch is the same on two "
        "passes; it is not: the loader handed back the same tensor object both times",
    ),
    "wrong_same_object": (
        {"accepts-static", "detects-change"},
        "In case 'equal copies every pass' your check said the batch changed between two passes",
    ),
    "wrong_features_only": (
        {"detects-change"},
        "In case 'labels reordered on their own' your check said the batch is the same",
    ),
    # torch's generator is left where the judge put it: another batch, other initial weights.
    "wrong_seeds_random_only": (
        {"same-batch", "same-losses"},
        "the two runs with the same seed took different batches from the loader",
    ),
    # The runs repeat, batch and losses: only dropout's frozen mask gives it away.
    "wrong_reseeds_every_step": (
        {"fresh-randomness"},
        "In case 'seeded run A' dropout drew at step 1 the very mask it drew at the step before "
        "(19 of 19 steps did)",
    ),
}


def fixture(name: str) -> str:
    return (FOLDER / f"{name}.py").read_text()


def test_every_fixture_is_judged_here() -> None:
    kept = {path.stem for path in FOLDER.glob("*.py")}
    assert kept == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3
    cases = get_exercise(SLUG).cases
    assert len(problem.LOADERS) + problem.SEEDED_RUNS == len(cases)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_file_written_differently_passes(name: str, seed: int) -> None:
    found = judgement(SLUG, fixture(name), seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict is None  # no overfit run of the drill's: no drill verdict


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


@pytest.mark.parametrize(
    ("code", "breaks", "says"),
    [
        # A seed of its own: the two runs agree, and so does the run with another seed.
        (
            edited("    random.seed(seed)\n", "    seed = 0\n    random.seed(seed)\n"),
            {"seed-matters"},
            "a run with another seed took the same batch and started from the same weights",
        ),
        # A new batch from the loader at every step: seeded, so repeatable, but not one batch
        # (and the first batch's loss, which "trains" reads, need not fall).
        (
            edited(
                "        loss = F.cross_entropy(model(features), labels)\n",
                "        features, labels = next(iter(loader))\n"
                "        loss = F.cross_entropy(model(features), labels)\n",
            ),
            {"one-batch", "trains?"},
            "the input of step 0 was not the batch the run took first from the loader (20 of 20",
        ),
        # Forwards and backwards, but no step: the losses repeat and nothing is learnt.
        (
            edited("        optimizer.step()\n", ""),
            {"trains"},
            "the loss of the trained weights on the batch is",
        ),
    ],
    ids=["own-seed", "batch-per-step", "no-step"],
)
def test_the_other_checks_fail_on_the_mistake_they_name(
    code: str, breaks: set[str], says: str
) -> None:
    for seed in (0, 3):
        found = judgement(SLUG, code, seed)
        assert found.status == "failed", found.message
        required = {key for key in breaks if not key.endswith("?")}
        allowed = required | {key.rstrip("?") for key in breaks}
        assert required <= failing_checks(found) <= allowed
        assert says in " ".join(check.message for check in found.checks)


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (
            edited("    return len(first) == len(second) and all(", "    return 'yes' or all("),
            "batch_is_static returned str; it must return True or False",
        ),
        (
            edited("    return model\n", "    return nn.Identity()\n"),
            "seeded_overfit must return the model it trained",
        ),
        (
            edited("    features, labels = next(iter(loader))\n", "    features, labels = 0, 0\n"),
            "TypeError",
        ),
    ],
    ids=["str-verdict", "another-model", "crashes"],
)
def test_a_file_that_breaks_the_format_is_told_how(code: str, says: str) -> None:
    found = judgement(SLUG, code)
    assert found.status == "error"
    assert found.message is not None
    messages = found.message + " ".join(check.message for check in found.checks)
    assert says in messages
    assert "error" in {check.status for check in found.checks}


# -- the judge's truths, against the loaders iterated here by hand -----------------------------


def passes_by_hand(kind: str, seed: int) -> list[list[list[float]]]:
    """Two passes over a fresh hidden loader, each batch written out as plain numbers at once."""
    loader = problem.HiddenLoader(kind, seed)
    kept = []
    for _ in range(2):
        for batch in loader:
            kept.append([t.double().flatten().tolist() for t in batch])
    return kept


@pytest.mark.parametrize("kind", problem.LOADERS)
def test_the_loader_truth_is_what_two_passes_show(kind: str) -> None:
    for case_seed in [*range(8), *hidden_seeds(get_exercise(SLUG), 0)]:
        first, second = passes_by_hand(kind, case_seed)
        truth = problem.loader_truth(kind, case_seed)
        assert truth == (first == second)
        assert truth == (kind in problem.STATIC)
        if kind == "labels-apart":
            assert first[0] == second[0] and first[1] != second[1]


def test_the_in_place_loader_hands_back_one_object() -> None:
    """What fools a check that keeps the first pass by reference: one tensor, changed."""
    loader = problem.HiddenLoader("in-place", 5)
    first = next(iter(loader))[0]
    values = first.clone()
    second = next(iter(loader))[0]
    assert first is second and not torch.equal(values, second)


def test_the_hidden_runs_scramble_the_global_state_differently() -> None:
    """Without seeding, two calls of the same code draw different batches (the judge's loader
    draws from both global generators)."""
    batches = []
    for number in range(2):
        torch.manual_seed(11 + 7919 * (number + 1))
        random.seed(11 * 31 + number + 1)
        batches.append(next(iter(problem.GlobalLoader(11)))[0])
    assert not torch.equal(batches[0], batches[1])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_solution_trains_within_its_band(seed: int) -> None:
    """The reference ends at 0.15-0.41 of its starting loss on seeds 0-4; the band is 0.7."""
    measured = numbers(solution(SLUG, seed))
    for label in ("seeded run A", "seeded run B"):
        ratio = measured[f"loss at the end ({label})"] / measured[f"loss at the start ({label})"]
        assert ratio < checks.TRAINS_BELOW - 0.2
        assert measured[f"steps with the last step's dropout mask ({label})"] == 0
