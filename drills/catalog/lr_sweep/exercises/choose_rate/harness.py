"""Runs inside the sandbox with the learner's file: choose_lr() on the hidden run's data and a
copy of its model at the initial weights, then train() from those same weights at the rate it
returned. Sends back the trained weights and the rate (see problem.py)."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.lr_sweep.exercises.choose_rate.problem import (
    CANDIDATES,
    STEPS,
    build,
    fresh_model,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, as_number, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    returned = learner.choose_lr(
        fresh_model(problem), problem.x.clone(), problem.y.clone(), CANDIDATES
    )
    lr, what = as_number(returned)
    if lr is None or lr <= 0:
        shown = repr(returned) if isinstance(returned, int | float) else what
        raise ContractError(f"choose_lr returned {shown}; return a positive number, the rate")
    model = fresh_model(problem)
    learner.train(model, problem.x.clone(), problem.y.clone(), lr, STEPS, report)
    # The judge trains plain SGD at this rate itself: the number is the learner's answer, not
    # evidence of anything.
    return CaseOutput(weights=state_of(model), numbers={"lr": (lr, what)})
