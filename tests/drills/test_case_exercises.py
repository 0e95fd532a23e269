"""A cause that names an exercise names one that exists, of its own drill, whose task is to fix a
loop (a "write the function" exercise repairs nothing); a healthy cause names none. The case
page offers a code verdict from these links (app/exercises/case_verdict.py)."""

import pytest

from drills.cases.contract import CaseSet
from drills.cases.registry import all_cases, get_case
from drills.cases.scoring import Diagnosis, score_case
from drills.exercises.registry import UnknownExercise, get_exercise


def _case_sets() -> list[CaseSet]:
    seen: dict[str, CaseSet] = {}
    for case in all_cases():
        seen.setdefault(case.case_set.drill, case.case_set)
    return list(seen.values())


@pytest.mark.parametrize("case_set", _case_sets(), ids=lambda case_set: case_set.drill)
def test_every_named_exercise_exists_and_fixes_a_loop_of_the_same_drill(
    case_set: CaseSet,
) -> None:
    for cause in case_set.causes:
        if cause.exercise is None:
            continue
        assert cause.family != "healthy", f"{cause.key}: a healthy cause has nothing to fix"
        try:
            exercise = get_exercise(cause.exercise)
        except UnknownExercise:
            pytest.fail(f"{case_set.drill}/{cause.key} names no exercise {cause.exercise!r}")
        assert exercise.drill == case_set.drill, f"{cause.key}: {exercise.slug} is another drill's"
        assert exercise.kind == "fix", f"{cause.key}: {exercise.slug} is not a fix-the-loop task"


def test_causes_are_linked_to_their_exercises() -> None:
    """The links are there (a refactor that drops the field would leave the feature unused)."""
    linked = {
        (case_set.drill, cause.key)
        for case_set in _case_sets()
        for cause in case_set.causes
        if cause.exercise is not None
    }
    assert len(linked) >= 11
    assert ("overfit-one-batch", "labels-reshuffled") in linked


def test_a_case_offers_the_exercises_of_all_its_causes_whatever_the_draw() -> None:
    for case in all_cases():
        expected = {
            case.case_set.cause(key).exercise
            for key in case.causes
            if case.case_set.cause(key).exercise is not None
        }
        assert set(case.exercises()) == expected


@pytest.mark.parametrize(
    ("drawn", "named", "exercise", "passed", "verified"),
    [
        ("labels-reshuffled", "labels-reshuffled", "overfit-shuffled-pairs", True, True),
        ("labels-reshuffled", "labels-reshuffled", "overfit-shuffled-pairs", False, False),
        ("labels-reshuffled", "loop-is-sound", "overfit-shuffled-pairs", True, False),
        ("noise-left-on", "noise-left-on", "overfit-shuffled-pairs", True, False),
    ],
    ids=["right", "judge-failed", "wrong-cause", "another-causes-loop"],
)
def test_a_code_verdict_earns_the_fix_point_only_for_the_drawn_causes_own_exercise(
    drawn: str, named: str, exercise: str, passed: bool, verified: bool
) -> None:
    case = get_case("a-sanity-check")
    diagnosis = Diagnosis(drawn, (), case.case_set.experiments[0].key, "", "")
    score = score_case(case, drawn, diagnosis, [], named, passed, 3, fix_key="", exercise=exercise)
    assert score.fix_verified is verified
    assert score.exercise_fits is (case.cause(drawn).exercise == exercise)
    assert score.as_dict()["exercise"] == exercise
