"""Runs inside the sandbox with the learner's file: split() once per hidden run, on that run's
reviews, and the validation rows it chose sent back as a tensor (see problem.py)."""

from __future__ import annotations

from types import ModuleType

import torch

from drills.catalog.group_leakage.exercises.honest_split.problem import build
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    reviews = build(case, seed).reviews
    generator = torch.Generator().manual_seed(seed + 1)
    returned = learner.split(reviews.features.clone(), reviews.users.clone(), generator)
    chosen = validation_rows(returned, len(reviews))
    # No model here: the judge trains one outside, on the split these rows make.
    return CaseOutput(weights={}, tensors={"validation": chosen})


def validation_rows(returned: object, count: int) -> torch.Tensor:
    """The learner's validation rows as int64 indices; ContractError (in the learner's terms)
    when they are not a 1-D tensor of row numbers."""
    if not isinstance(returned, torch.Tensor):
        raise ContractError(f"split returned {type(returned).__name__}, not a tensor")
    if returned.dim() != 1:
        raise ContractError(f"split returned a tensor of shape {list(returned.shape)}; use 1-D")
    if returned.is_floating_point() or returned.is_complex() or returned.dtype == torch.bool:
        raise ContractError(f"split returned {returned.dtype}; return row numbers (integers)")
    rows = returned.detach().to(torch.int64).clone()
    if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= count):
        raise ContractError(f"split returned a row number outside 0..{count - 1}")
    return rows
