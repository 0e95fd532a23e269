"""Runs inside the sandbox with the learner's file: train() on the hidden batch of one run."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.overfit_one_batch.exercises.shuffled_pairs.problem import build
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    learner.train(problem.model, problem.features.clone(), problem.labels.clone(), report)
    return CaseOutput(weights=state_of(problem.model))
