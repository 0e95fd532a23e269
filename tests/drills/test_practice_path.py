"""The study path names only things that exist, once each, in four hours."""

from drills.cases.registry import get_case
from drills.core.registry import get_drill
from drills.practice.items import get_item
from drills.practice.path import PATH, StepKind, all_steps


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
        elif step.kind is StepKind.rounds:
            assert int(step.target) >= 1
        else:
            get_item(step.target)
    assert {step.kind for step in steps} == set(StepKind)
