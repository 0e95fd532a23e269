"""Runs inside the sandbox with the learner's file: log_probs() on the judge's probe logits (and
the gradient of the token loss through it), train() for one step from the confident checkpoint,
and train() for a whole run from the initial weights."""

from __future__ import annotations

from types import ModuleType

import torch

from drills.catalog.nan_hunt.exercises.confident_logits.problem import (
    Probe,
    as_triples,
    build,
    fresh_confident,
    fresh_model,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of

STEPPED = "step."  # prefix of the checkpoint's weights after one step, among the values sent


def quiet(name: str, step: int, value: float) -> None:
    """The single step draws nothing: the live curve is the training run's."""


def probe(learner: ModuleType, found: Probe) -> dict[str, torch.Tensor]:
    """What log_probs returns on the probe, and the gradient with respect to the logits of the
    mean negative log-likelihood over real tokens taken from it (absent when there is none)."""
    logits = found.logits.clone().requires_grad_()
    returned = learner.log_probs(logits.clone())
    if not isinstance(returned, torch.Tensor):
        raise ContractError(f"log_probs returned {type(returned).__name__}, not a tensor")
    if tuple(returned.shape) != tuple(logits.shape):
        raise ContractError(
            f"log_probs returned shape {list(returned.shape)}; it must keep the logits' shape, "
            f"{list(logits.shape)}"
        )
    if not returned.is_floating_point():
        raise ContractError(f"log_probs returned {returned.dtype}; use floating-point numbers")
    sent = {"log_probs": returned.detach().double().clone()}
    if returned.requires_grad:
        picked = returned[found.mask].gather(-1, found.labels[found.mask].unsqueeze(-1))
        (gradient,) = torch.autograd.grad(-picked.mean(), logits, allow_unused=True)
        if gradient is not None:
            sent["gradient"] = gradient.detach().double().clone()
    return sent


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    sent = probe(learner, problem.probe)
    stepped = fresh_confident(problem)
    learner.train(stepped, as_triples(problem.stream[:1]), quiet)
    sent.update({STEPPED + name: value for name, value in state_of(stepped).items()})
    trained = fresh_model(problem)
    learner.train(trained, as_triples(problem.stream), report)
    return CaseOutput(weights=state_of(trained), tensors=sent)
