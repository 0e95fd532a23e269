"""Runs inside the sandbox with the learner's file: train() once for a single step on the case's
batch, and once for a whole training run, each on a fresh model at the hidden run's initial
weights."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.variable_length_loss.exercises.per_token_loss.problem import (
    as_pairs,
    build,
    fresh_model,
    training_run,
)
from drills.exercises.running import CaseOutput, Report, state_of


def quiet(name: str, step: int, value: float) -> None:
    """The single step draws nothing: the live curve is the training run's."""


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    stepped = fresh_model(problem)
    learner.train(stepped, as_pairs([problem.first]), quiet)
    trained = fresh_model(problem)
    learner.train(trained, as_pairs(training_run(problem)), report)
    return CaseOutput(weights=state_of(trained), tensors=state_of(stepped))
