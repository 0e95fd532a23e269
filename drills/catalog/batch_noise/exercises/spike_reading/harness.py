"""Runs inside the sandbox with the learner's file: builds one hidden run's model, training set
and spiking batch, calls read_spike() on copies of them, and sends back its report as tensors
(see problem.py)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import ModuleType

import torch

from drills.catalog.batch_noise.exercises.spike_reading.problem import build
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report

NUMBERS = ("batch_loss", "set_loss", "sigmas", "worst_batch_loss")


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    returned = learner.read_spike(
        copy.deepcopy(problem.model),
        problem.data.features.clone(),
        problem.data.labels.clone(),
        problem.batch_features.clone(),
        problem.batch_labels.clone(),
    )
    numbers, corrupt = report_tensors(returned)
    # No model is trained here: the weights blob is empty, and the report is all there is.
    return CaseOutput(weights={}, tensors={"numbers": numbers, "corrupt": corrupt})


def number(returned: object, key: str) -> float:
    """A Python number or a one-element float tensor (on a graph or not) as a float."""
    if isinstance(returned, bool) or not isinstance(returned, int | float | torch.Tensor):
        raise ContractError(f"{key} is {type(returned).__name__}; use a float")
    if isinstance(returned, torch.Tensor):
        if returned.numel() != 1 or not returned.is_floating_point():
            raise ContractError(f"{key} is a tensor of shape {list(returned.shape)}; use a float")
        return float(returned.detach().item())
    return float(returned)


def report_tensors(returned: object) -> tuple[torch.Tensor, torch.Tensor]:
    """The learner's report as tensors; ContractError (in the learner's terms) when it is not in
    the documented format."""
    if not isinstance(returned, Mapping):
        raise ContractError(f"read_spike returned {type(returned).__name__}, not a dict")
    for key in (*NUMBERS, "corrupt"):
        if key not in returned:
            raise ContractError(f"read_spike returned a dict without {key!r}")
    values = [number(returned[key], key) for key in NUMBERS]
    corrupt = returned["corrupt"]
    if isinstance(corrupt, torch.Tensor) and corrupt.dtype == torch.bool and corrupt.numel() == 1:
        corrupt = bool(corrupt.item())
    if not isinstance(corrupt, bool):
        raise ContractError(f"corrupt is {type(corrupt).__name__}; use True or False")
    return torch.tensor(values, dtype=torch.float64), torch.tensor([corrupt])
