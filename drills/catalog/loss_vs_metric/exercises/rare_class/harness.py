"""Runs inside the sandbox with the learner's file: train() once per hidden run, on the judge's
training examples and a fresh model at the run's initial weights. Only the trained weights go
back; the judge scores them outside, on examples of its own (checks.py)."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.loss_vs_metric.exercises.rare_class.problem import build, fresh_model
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    model = fresh_model(problem)
    # Copies: whatever the loop does to its tensors, the problem keeps its own.
    learner.train(model, problem.features.clone(), problem.labels.clone(), report)
    return CaseOutput(weights=state_of(model))
