"""Runs inside the sandbox with the learner's file: MaskedSmoothL1's forward and backward on each
of the judge's probes (the loss, and the gradient of grad_output times it with respect to pred),
then train() for a whole run from the hidden run's initial weights (see problem.py)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch

from drills.catalog.gradient_check.exercises.smooth_l1_backward.problem import (
    Probe,
    as_triples,
    build,
    fresh_model,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of


def loss_function(learner: ModuleType) -> Any:
    """The learner's Function: it must stay a torch.autograd.Function, whose backward is the
    exercise (a plain function would have autograd write the gradient instead)."""
    function = learner.MaskedSmoothL1
    if not (isinstance(function, type) and issubclass(function, torch.autograd.Function)):
        raise ContractError(
            "MaskedSmoothL1 must stay a torch.autograd.Function with its own backward"
        )
    return function


def probe(function: Any, found: Probe, index: int) -> dict[str, torch.Tensor]:
    """The loss the Function returns on the probe, and the gradient its backward gives pred
    (absent when it gives none)."""
    pred = found.pred.clone().requires_grad_()
    loss = function.apply(pred, found.target.clone(), found.mask.clone(), found.beta)
    if not isinstance(loss, torch.Tensor):
        raise ContractError(f"MaskedSmoothL1.apply returned {type(loss).__name__}, not a tensor")
    if loss.numel() != 1 or not loss.is_floating_point():
        raise ContractError(
            f"MaskedSmoothL1.apply returned a {loss.dtype} tensor of shape {list(loss.shape)}; "
            "the loss is one floating-point number"
        )
    sent = {f"loss-{index}": loss.detach().double().reshape(1).clone()}
    if loss.requires_grad:
        scaled = loss.reshape(()) * found.grad_output
        (gradient,) = torch.autograd.grad(scaled, pred, allow_unused=True)
        if gradient is not None:
            sent[f"gradient-{index}"] = gradient.detach().double().clone()
    return sent


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    function = loss_function(learner)
    sent: dict[str, torch.Tensor] = {}
    for index, found in enumerate(problem.probes):
        sent.update(probe(function, found, index))
    trained = fresh_model(problem)
    learner.train(trained, as_triples(problem.stream), report)
    return CaseOutput(weights=state_of(trained), tensors=sent)
