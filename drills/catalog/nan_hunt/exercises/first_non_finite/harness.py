"""Runs inside the sandbox with the learner's file: builds one hidden run's model, batch and loss
function, calls first_non_finite() on them, and sends back its answer (the stage's code and the
module's name as UTF-8 bytes), how many hooks were left on the model, its parameters and torch's
global module hooks, and the weights."""

from __future__ import annotations

import warnings
from types import ModuleType

import torch
from torch import nn

from drills.catalog.nan_hunt.exercises.first_non_finite.problem import (
    FAULTS,
    STAGES,
    build,
    finite_copy,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of

MAX_NAME = 200  # characters of a module name: the model's longest is 16
MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_grad_hooks")
GLOBAL_HOOKS = (
    "_global_forward_hooks",
    "_global_forward_pre_hooks",
    "_global_backward_hooks",
    "_global_backward_pre_hooks",
)


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(FAULTS[case], seed)
    with warnings.catch_warnings():
        # A full backward hook on a module whose inputs need no gradient (the first layer, the
        # model itself) makes torch warn on every backward: expected of a right answer, so
        # neither printed nor, where warnings are errors, raised.
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        returned = learner.first_non_finite(problem.model, problem.inputs.clone(), problem.loss_fn)
    hooks = hook_counts(problem.model)  # first, before anything else touches the model
    stage, module = answer_tensors(returned)
    weights = state_of(problem.model)
    exact = {f"param:{name}": t for name, t in weights.items()}
    return CaseOutput(
        weights=finite_copy(weights),
        tensors={"answer": stage, "answer-module": module, **hooks, **exact},
    )


def answer_tensors(returned: object) -> tuple[torch.Tensor, torch.Tensor]:
    """The answer as (int64 [stage code or -1, 1 when a module is named], the name's UTF-8
    bytes); ContractError (in the learner's terms) when it is not in the documented format."""
    if returned is None:
        return torch.tensor([-1, 0]), torch.zeros(0, dtype=torch.uint8)
    if not isinstance(returned, tuple | list) or len(returned) != 2:
        raise ContractError(
            f"first_non_finite returned {type(returned).__name__}; return None, or a pair "
            "(stage, module name) such as ('forward', 'encoder.layers.0')"
        )
    stage, module = returned
    if not isinstance(stage, str) or stage not in STAGES:
        allowed = ", ".join(repr(name) for name in STAGES)
        raise ContractError(f"the stage is {stage!r}; use one of {allowed}")
    if stage == "loss" and module is not None:
        raise ContractError("for the loss stage name no module: return ('loss', None)")
    if stage != "loss" and not isinstance(module, str):
        raise ContractError(
            f"for the {stage} stage the module is {type(module).__name__}; give its name, a str"
        )
    code = torch.tensor([STAGES.index(stage), int(module is not None)])
    if module is None:
        return code, torch.zeros(0, dtype=torch.uint8)
    if len(module) > MAX_NAME:
        raise ContractError(f"the module name is {len(module)} characters long; no name is")
    return code, torch.tensor(list(module.encode("utf-8")), dtype=torch.uint8)


def hook_counts(model: nn.Module) -> dict[str, torch.Tensor]:
    """How many hooks are registered on each module and each parameter of `model` (in the order
    of named_modules() and named_parameters()), and globally on every module."""

    def count(holder: object, attributes: tuple[str, ...]) -> int:
        return sum(len(getattr(holder, attribute, None) or {}) for attribute in attributes)

    per_module = [count(module, MODULE_HOOKS) for _, module in model.named_modules()]
    per_parameter = [count(p, TENSOR_HOOKS) for _, p in model.named_parameters()]
    left = count(nn.modules.module, GLOBAL_HOOKS)
    return {
        "hooks-modules": torch.tensor(per_module, dtype=torch.int64),
        "hooks-parameters": torch.tensor(per_parameter, dtype=torch.int64),
        "hooks-global": torch.tensor([left], dtype=torch.int64),
    }
