"""Runs inside the sandbox with the learner's file: builds one hidden run's model and optimizer
with the gradients in .grad, calls relative_update() on them, and sends back the number it
returned and the weights the step left."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.optimizer_membership.exercises.relative_update.problem import SETUPS, build
from drills.exercises.running import CaseOutput, Report, as_number, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(SETUPS[case], seed)
    returned = learner.relative_update(problem.model, problem.optimizer, problem.name)
    return CaseOutput(weights=state_of(problem.model), numbers={"result": as_number(returned)})
