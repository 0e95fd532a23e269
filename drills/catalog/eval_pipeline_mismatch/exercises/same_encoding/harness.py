"""Runs inside the sandbox with the learner's file: encode_for_evaluation() on every hidden
evaluation ticket, its ids checked for shape and range and padded into one tensor."""

from __future__ import annotations

from types import ModuleType

import torch

from drills.catalog.eval_pipeline_mismatch.exercises.same_encoding.problem import (
    MAX_TOKENS,
    build,
    padded,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report


def token_ids(returned: object, vocabulary: int) -> list[int]:
    """The learner's ids for one ticket, if they are 1 to MAX_TOKENS ids of the vocabulary."""
    if isinstance(returned, torch.Tensor):
        if returned.is_floating_point() or returned.dim() != 1:
            raise ContractError("encode_for_evaluation must return a list of token ids")
        returned = returned.tolist()
    if not isinstance(returned, list | tuple) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in returned
    ):
        raise ContractError(
            f"encode_for_evaluation returned {type(returned).__name__}; it must return a list "
            "of token ids (ints)"
        )
    ids = list(returned)
    if not 1 <= len(ids) <= MAX_TOKENS:
        raise ContractError(
            f"encode_for_evaluation returned {len(ids)} ids for one ticket; the router reads at "
            f"most {MAX_TOKENS}"
        )
    if not all(0 <= i < vocabulary for i in ids):
        raise ContractError(f"encode_for_evaluation returned an id outside 0..{vocabulary - 1}")
    return ids


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    vocabulary = len(problem.tokenizer.vocabulary)
    rows = [
        token_ids(learner.encode_for_evaluation(t.subject, t.body, problem.tokenizer), vocabulary)
        for t in problem.evaluation
    ]
    return CaseOutput(weights={"ids": padded(problem.tokenizer, rows)})
