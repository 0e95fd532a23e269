"""Runs inside the sandbox with the learner's file: train() once for a single step, and once for
a whole training run, each on a fresh model at the hidden run's initial weights."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.gradient_accumulation.exercises.big_batch_step.problem import (
    build,
    copies,
    fresh_model,
)
from drills.exercises.running import CaseOutput, Report, state_of


def quiet(name: str, step: int, value: float) -> None:
    """The single step draws nothing: the live curve is the training run's."""


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    stepped = fresh_model(problem)
    learner.train(stepped, copies(problem.batches[: problem.k]), problem.k, quiet)
    trained = fresh_model(problem)
    learner.train(trained, copies(problem.batches), problem.k, report)
    # The first step of the training run is the single step: the same weights, the same batches.
    return CaseOutput(weights=state_of(trained), tensors=state_of(stepped))
