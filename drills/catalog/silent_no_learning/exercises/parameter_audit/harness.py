"""Runs inside the sandbox with the learner's file: builds one hidden run's model, optimizer and
backpropagated loss, calls audit() on them, and sends back its rows as a table (problem.py's
COLUMNS), the weights, and every .grad as the audit left it."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

import torch

from drills.catalog.silent_no_learning.exercises.parameter_audit.problem import (
    FAULTS,
    STATES,
    build,
    encode_row,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of

KEYS = ("requires_grad", "in_optimizer", "grad", "grad_norm")


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(FAULTS[case], seed)
    names = [name for name, _ in problem.model.named_parameters()]
    returned = learner.audit(problem.model, problem.optimizer, problem.loss)
    table = audit_table(returned, names)
    grads = {
        f"grad:{name}": parameter.grad.detach().clone()
        for name, parameter in problem.model.named_parameters()
        if parameter.grad is not None
    }
    return CaseOutput(weights=state_of(problem.model), tensors={"audit": table, **grads})


def audit_table(returned: object, names: list[str]) -> torch.Tensor:
    """The learner's rows as one float64 tensor, in the order of `names`; ContractError (in the
    learner's terms) when they are not in the documented format."""
    if not isinstance(returned, Mapping):
        raise ContractError(
            f"audit returned {type(returned).__name__}; it must return a dict that maps each "
            "parameter's name to its row"
        )
    missing = [name for name in names if name not in returned]
    if missing:
        shown = ", ".join(repr(name) for name in missing[:3])
        raise ContractError(f"audit returned no row for {shown} ({len(missing)} missing)")
    extra = [key for key in returned if key not in names]
    if extra:
        raise ContractError(
            f"audit returned a row for {extra[0]!r}, which is not a name that "
            "model.named_parameters() gives"
        )
    return torch.tensor([row_values(name, returned[name]) for name in names], dtype=torch.float64)


def row_values(name: str, row: object) -> list[float]:
    if not isinstance(row, Mapping):
        raise ContractError(f"the row of {name!r} is {type(row).__name__}, not a dict")
    for key in KEYS:
        if key not in row:
            raise ContractError(f"the row of {name!r} has no {key!r}")
    for key in ("requires_grad", "in_optimizer"):
        if not isinstance(row[key], bool):
            raise ContractError(
                f"in the row of {name!r}, {key} is {type(row[key]).__name__}; use True or False"
            )
    grad = row["grad"]
    if not isinstance(grad, str) or grad not in STATES:
        allowed = ", ".join(repr(state) for state in STATES)
        raise ContractError(f"in the row of {name!r}, grad is {grad!r}; use one of {allowed}")
    return encode_row(row["requires_grad"], row["in_optimizer"], grad, norm_of(name, row))


def norm_of(name: str, row: Mapping[str, object]) -> float | None:
    """grad_norm as a float (NaN and inf kept: the checks say what is wrong with them)."""
    norm = row["grad_norm"]
    if norm is None:
        return None
    if isinstance(norm, int | float) and not isinstance(norm, bool):
        return float(norm)
    if (
        isinstance(norm, torch.Tensor)
        and norm.numel() == 1
        and norm.is_floating_point()
        and not norm.requires_grad
    ):
        return float(norm.item())
    raise ContractError(
        f"in the row of {name!r}, grad_norm is {type(norm).__name__}; use a float or None"
    )
