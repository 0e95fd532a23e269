"""Runs inside the sandbox with the learner's file: init_weights() once on each hidden network,
handed over with every parameter unset, and the weights it left sent back. The live curve is
the drill's training from those weights, drawn here for the learner to watch; the judge ignores
it and trains its own copy outside."""

from __future__ import annotations

import math
from types import ModuleType

import torch

from drills.catalog.init_check.exercises.sound_start.problem import (
    Shape,
    build,
    loaded,
    shape_of,
    train_losses,
    unset_model,
)
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    shape = shape_of(case, seed)
    model = unset_model(shape)
    learner.init_weights(model)
    weights = state_of(model)
    draw_curve(shape, weights, case, seed, report)
    return CaseOutput(weights=weights)


def draw_curve(
    shape: Shape, weights: dict[str, torch.Tensor], case: int, seed: int, report: Report
) -> None:
    """The loss of the drill's training from these weights, when they make a usable network
    (the judge says why when they do not)."""
    finite = all(bool(torch.isfinite(t).all()) for t in weights.values() if t.is_floating_point())
    try:
        model = loaded(shape, weights)
    except (RuntimeError, KeyError):
        return
    if not finite:
        return
    for step, loss in enumerate(train_losses(model, build(case, seed).data)):
        if math.isfinite(loss):
            report("loss", step, loss)
