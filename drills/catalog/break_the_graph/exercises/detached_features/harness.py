"""Runs inside the sandbox with the learner's file: train() on the hidden batch of one run."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.break_the_graph.exercises.detached_features.problem import build
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(seed)
    data = problem.data
    learner.train(problem.model, data.features.clone(), data.labels.clone(), report)
    return CaseOutput(weights=state_of(problem.model))
