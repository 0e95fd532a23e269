"""Runs inside the sandbox with the learner's file: train() once on the first two batches, and
once for the whole run, each on a fresh network at the hidden run's initial weights."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.silent_no_learning.exercises.gradient_panel.problem import (
    CONFIG,
    SHORT,
    build,
    copies,
    fresh_model,
)
from drills.exercises.running import CaseOutput, Report, state_of


def quiet(name: str, step: int, value: float) -> None:
    """The short run draws nothing: the live curve is the whole run's."""


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(seed)
    short = fresh_model(problem)
    learner.train(short, copies(problem.batches[:SHORT]), CONFIG.lr, quiet)
    trained = fresh_model(problem)
    learner.train(trained, copies(problem.batches), CONFIG.lr, report)
    # The short run is the whole run's first two steps: the same weights, the same batches.
    return CaseOutput(weights=state_of(trained), tensors=state_of(short))
