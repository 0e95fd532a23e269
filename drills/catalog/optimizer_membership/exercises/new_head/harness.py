"""Runs inside the sandbox with the learner's file: fine_tune() on the hidden batch of one run."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.optimizer_membership.exercises.new_head.problem import build
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(seed)
    data = problem.data
    learner.fine_tune(
        problem.model, problem.new_head, data.features.clone(), data.labels.clone(), report
    )
    return CaseOutput(weights=state_of(problem.model))
