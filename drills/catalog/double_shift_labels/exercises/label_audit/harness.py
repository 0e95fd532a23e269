"""Runs inside the sandbox with the learner's file: builds one hidden run's batch and its labels,
calls audit_labels() on them, and sends back its report as tensors (see problem.py)."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

import torch

from drills.catalog.double_shift_labels.exercises.label_audit.problem import build
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report

KEYS = ("shift", "padding_masked", "prompt_masked", "rows_without_targets")


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    batch = build(case, seed)
    returned = learner.audit_labels(
        batch.input_ids.clone(),
        batch.targets.clone(),
        batch.attention_mask.clone(),
        batch.prompt_mask.clone(),
    )
    summary, rows = report_tensors(returned, batch.input_ids.shape[0])
    # No model here: the weights blob is empty, and the report is all there is to judge.
    return CaseOutput(weights={}, tensors={"report": summary, "empty_rows": rows})


def report_tensors(returned: object, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The learner's report as tensors; ContractError (in the learner's terms) when it is not in
    the documented format."""
    if not isinstance(returned, Mapping):
        raise ContractError(f"audit_labels returned {type(returned).__name__}, not a dict")
    for key in KEYS:
        if key not in returned:
            raise ContractError(f"audit_labels returned a dict without {key!r}")
    shift = returned["shift"]
    if shift is not None and (not isinstance(shift, int) or isinstance(shift, bool)):
        raise ContractError(f"shift is {type(shift).__name__}; use 0, 1, 2 or None")
    if shift not in (None, 0, 1, 2):
        raise ContractError(f"shift is {shift!r}; use 0, 1, 2 or None")
    for key in ("padding_masked", "prompt_masked"):
        if not isinstance(returned[key], bool):
            raise ContractError(f"{key} is {type(returned[key]).__name__}; use True or False")
    rows = returned["rows_without_targets"]
    if not isinstance(rows, list | tuple) or not all(
        isinstance(row, int) and not isinstance(row, bool) for row in rows
    ):
        raise ContractError("rows_without_targets must be a list of row numbers (ints)")
    if any(not 0 <= row < count for row in rows):
        raise ContractError(f"rows_without_targets names a row outside the batch (0..{count - 1})")
    empty = torch.zeros(count, dtype=torch.bool)
    empty[list(rows)] = True
    summary = [
        -1 if shift is None else shift,
        returned["padding_masked"],
        returned["prompt_masked"],
    ]
    return torch.tensor([int(value) for value in summary], dtype=torch.int64), empty
