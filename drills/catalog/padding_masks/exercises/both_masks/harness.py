"""Runs inside the sandbox with the learner's file, on three fresh models built from the
learner's TinyAttention class with the hidden run's initial weights loaded:

1. the model run on the held-out sequences padded to two lengths, and on each sequence alone;
2. one step of train() on the first training batch, with hooks that keep the logits the model
   returned and the gradient the loss sent back to them;
3. a whole training run, then the probe of 1 again on the trained model.

It sends back what the learner's code produced on inputs chosen here; the judge compares it
with its own forward and its own loss, computed outside from the same weights and labels."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch
from torch import nn

from drills.catalog.padding_masks.exercises.both_masks.problem import (
    WIDTH,
    Problem,
    build,
    padded,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of

CLASSES = 3  # below, above, padding


def quiet(name: str, step: int, value: float) -> None:
    """The single step draws nothing: the live curve is the training run's."""


def learner_model(learner: ModuleType, problem: Problem) -> nn.Module:
    model = learner.TinyAttention(WIDTH)
    if not isinstance(model, nn.Module):
        raise ContractError(f"TinyAttention({WIDTH}) made a {type(model).__name__}, not a model")
    try:
        model.load_state_dict(problem.initial)
    except RuntimeError as exc:
        names = ", ".join(problem.initial)
        raise ContractError(
            f"TinyAttention must keep the problem's parameters ({names}) and no others: "
            f"{str(exc).splitlines()[0]}"
        ) from None
    return model


def logits_of(returned: object, tokens: torch.Tensor) -> torch.Tensor:
    """The model's output, if it is a floating-point tensor of (batch, length, 3) logits."""
    if not isinstance(returned, torch.Tensor) or not returned.is_floating_point():
        raise ContractError(f"model(tokens) returned {type(returned).__name__}, not logits")
    if tuple(returned.shape) != (*tokens.shape, CLASSES):
        raise ContractError(
            f"model(tokens) returned shape {list(returned.shape)} for tokens of shape "
            f"{list(tokens.shape)}; it must be {[*tokens.shape, CLASSES]}"
        )
    return returned


@torch.no_grad()
def probe(model: nn.Module, problem: Problem, when: str) -> dict[str, torch.Tensor]:
    """The model's logits for the held-out sequences padded to two lengths, and each alone."""
    out = {}
    for pad_to in problem.probe_lengths:
        tokens, _ = padded(problem.held_out, pad_to)
        out[f"{when}-padded-{pad_to}"] = logits_of(model(tokens.clone()), tokens).detach().clone()
    each = []
    for tokens in problem.held_out.tokens:
        single = tokens[None, :].clone()
        each.append(logits_of(model(single), single)[0].detach().clone())
    out[f"{when}-alone"] = torch.cat(each)
    return out


def one_step(learner: ModuleType, model: nn.Module, problem: Problem) -> dict[str, torch.Tensor]:
    """train() on the first batch alone. The first output the model returns with a graph is
    kept, with the gradient every backward sends to it (summed, as the step uses it)."""
    kept: dict[str, torch.Tensor] = {}

    def keep_gradient(gradient: torch.Tensor) -> None:
        previous = kept.get("step-grad")
        kept["step-grad"] = gradient.detach().clone() + (0 if previous is None else previous)

    def hook(module: nn.Module, args: Any, kwargs: Any, output: object) -> None:
        if "step-logits" in kept or not isinstance(output, torch.Tensor):
            return
        if not output.requires_grad:
            return  # an output taken under no_grad (a log line) is not the one trained on
        given = args[0] if args else kwargs.get("tokens")
        if not isinstance(given, torch.Tensor):
            raise ContractError("train() must call model(tokens) with the batch's tokens")
        kept["step-tokens"] = given.detach().clone()
        kept["step-logits"] = output.detach().clone()
        output.register_hook(keep_gradient)  # type: ignore[no-untyped-call]

    handle = model.register_forward_hook(hook, with_kwargs=True)
    tokens, labels = problem.batches[0]
    learner.train(model, [(tokens.clone(), labels.clone())], quiet)
    handle.remove()
    if "step-logits" not in kept:
        raise ContractError(
            "train() never called model(tokens) with gradients on the batch it was given (the "
            "judge watches that call; model.forward(tokens) goes around it)"
        )
    return kept


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    sent = probe(learner_model(learner, problem), problem, "before")
    sent.update(one_step(learner, learner_model(learner, problem), problem))
    trained = learner_model(learner, problem)
    batches = [(tokens.clone(), labels.clone()) for tokens, labels in problem.batches]
    learner.train(trained, batches, report)
    sent.update(probe(trained, problem, "after"))
    return CaseOutput(weights=state_of(trained), tensors=sent)
