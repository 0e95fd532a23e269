"""Runs inside the sandbox with the learner's file: calls train_loss_in_eval_mode() on a model
halfway through training (in train mode, as a training loop has it; in run B in eval mode, as a
validation routine would), then takes the mode probe: one forward pass with fixed dropout draws,
in whatever mode the function left the model."""

from __future__ import annotations

from types import ModuleType

from drills.catalog.val_below_train.exercises.eval_mode_remeasure.problem import (
    build,
    handed_in_train_mode,
    mode_probe,
)
from drills.exercises.running import CaseOutput, Report, as_number, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(seed)
    model = problem.model
    model.train(handed_in_train_mode(case))
    returned = learner.train_loss_in_eval_mode(
        model, problem.train_set.features.clone(), problem.train_set.labels.clone()
    )
    probe = mode_probe(model, problem, seed)
    return CaseOutput(
        weights=state_of(model),
        tensors={"probe": probe},
        numbers={"result": as_number(returned)},
    )
