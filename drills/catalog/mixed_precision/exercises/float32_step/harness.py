"""Runs inside the sandbox with the learner's file: train() once for a single step, and once for
a whole training run, each on a fresh model at the hidden run's initial weights and with a fresh
GradScaler at the hidden run's first scale."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.mixed_precision.exercises.float32_step.problem import (
    build,
    copies,
    fresh_model,
    fresh_scaler,
)
from drills.exercises.running import CaseOutput, Report, state_of


def quiet(name: str, step: int, value: float) -> None:
    """The single step draws nothing: the live curve is the training run's."""


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    stepped = fresh_model(problem)
    learner.train(stepped, copies(problem.batches[:1]), fresh_scaler(problem), quiet)
    trained = fresh_model(problem)
    learner.train(trained, copies(problem.batches), fresh_scaler(problem), report)
    # The first step of the training run is the single step: the same weights, the same batch.
    return CaseOutput(weights=state_of(trained), tensors=state_of(stepped))
