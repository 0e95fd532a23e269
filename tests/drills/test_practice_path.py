"""The study path names only things that exist, once each, in four hours."""

from drills.cases.registry import get_case, is_offered
from drills.core.registry import get_drill
from drills.exercises.registry import get_exercise
from drills.practice.items import get_item
from drills.practice.path import PATH, Step, StepKind, all_steps


def test_the_path_has_the_plans_four_hours() -> None:
    assert [stage.title.split(" · ")[0] for stage in PATH] == [f"Hour {n}" for n in (1, 2, 3, 4)]
    assert all(stage.steps for stage in PATH)


def test_every_step_names_something_that_exists_once() -> None:
    steps = all_steps()
    assert len({step.key for step in steps}) == len(steps)
    for step in steps:
        if step.kind is StepKind.drill:
            get_drill(step.target)
        elif step.kind is StepKind.case:
            get_case(step.target)
            assert is_offered(step.target), f"{step.target} is retired: it draws no attempts"
        elif step.kind is StepKind.exercise:
            get_exercise(step.target)
        elif step.kind is StepKind.rounds:
            assert int(step.target) >= 1
        else:
            get_item(step.target)
    assert {step.kind for step in steps} == set(StepKind)


def test_a_new_learner_starts_by_running_the_overfit_drill() -> None:
    assert all_steps()[0] == Step(StepKind.drill, "overfit-one-batch")


def test_a_recall_step_comes_after_a_drill_that_shows_its_answer() -> None:
    steps = all_steps()
    on_path = {step.target for step in steps if step.kind is StepKind.drill}
    for place, step in enumerate(steps):
        if step.kind is not StepKind.review:
            continue
        teaching = set(get_item(step.target).drills) & on_path
        run_before = {s.target for s in steps[:place] if s.kind is StepKind.drill}
        # (An item no drill on the path shows, the five-part diagnosis, follows a curve round.)
        assert not teaching or teaching & run_before, step.key
