"""Runs inside the sandbox with the learner's file: train() once per hidden run on the judge's
model and data, watched by hooks on the model's first and last layers that count, for every
example, the backward passes that sent a gradient to its row. The kept weights and those counts
go back (checks.py). The judge scores the weights with its own data; the counts are the one
record it reads as sent, as other exercises read their recorders, from hooks that code in this
process could tamper with (a loop that removes them is seen training on nothing, and fails).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch
from torch import nn

from drills.catalog.overfitting_leakage.exercises.honest_early_stop.problem import (
    CONFIG,
    FIRST_LAYER,
    LAST_LAYER,
    Problem,
    build,
    fresh_model,
)
from drills.exercises.running import CaseOutput, Report, state_of

# Two sums of a row's float32 bit patterns, each with its own fixed multipliers below 2^27: exact
# in int64 (16 products below 2^58), and two distinct rows agree on both by chance about once in
# 2^54 tries. A row is the example whose keys it has; a changed row is no example.
FEATURES, CLASSES = CONFIG.task.features, CONFIG.task.classes
MULTIPLIERS = torch.randint(1, 2**27, (FEATURES, 2), generator=torch.Generator().manual_seed(28))


def row_keys(rows: torch.Tensor) -> list[tuple[int, int]]:
    bits = rows.detach().to(torch.float32).contiguous().view(torch.int32).to(torch.int64)
    keyed: list[list[int]] = (bits @ MULTIPLIERS).tolist()
    return [(first, second) for first, second in keyed]


class ExampleCounter:
    """Counts, per example, the backward passes that sent a gradient to its row's logits.

    A hook before the first layer notes which examples a forward pass runs on; a hook after the
    last layer hangs a hook on the logits, and when a backward pass reaches them, each row whose
    gradient is not all zero was trained on. Evaluation (no gradient, or no backward) counts
    nothing, neither does a row the loss ignores, and frozen layers change nothing. The hooks are
    plain functions, which copy.deepcopy shares rather than copies, so a copy of the model trained
    in its place is counted too.
    """

    def __init__(self, model: nn.Module, problem: Problem) -> None:
        self.fresh_counts = torch.zeros(len(problem.train_y), dtype=torch.int64)
        self.val_counts = torch.zeros(len(problem.val), dtype=torch.int64)
        self.unknown = 0  # trained rows that are no example of the data as given
        self.backwards = 0
        # Validation first: a copy in the table has its original's keys, so it counts as it.
        self.index: dict[tuple[int, int], tuple[bool, int]] = {}
        for position, key in enumerate(row_keys(problem.val.features)):
            self.index[key] = (True, position)
        for position, key in enumerate(row_keys(problem.train_x)):
            self.index.setdefault(key, (False, position))
        self.pending: list[tuple[bool, int] | None] = []
        self.handles = [
            model.get_submodule(FIRST_LAYER).register_forward_pre_hook(self.before_first()),
            model.get_submodule(LAST_LAYER).register_forward_hook(self.after_last()),
        ]

    def before_first(self) -> Any:
        def note_rows(module: nn.Module, args: tuple[Any, ...]) -> None:
            inputs = args[0] if args else None
            if isinstance(inputs, torch.Tensor) and inputs.shape[-1:] == (FEATURES,):
                rows = inputs.reshape(-1, FEATURES)
                self.pending = [self.index.get(key) for key in row_keys(rows)]
            else:
                self.pending = []

        return note_rows

    def after_last(self) -> Any:
        def watch_logits(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
            found, self.pending = self.pending, []
            if not isinstance(output, torch.Tensor) or not output.requires_grad:
                return  # evaluation: no gradient can reach these rows
            if output.numel() != len(found) * CLASSES:
                return  # not a pass of the rows noted before the first layer

            def count(grad: torch.Tensor) -> None:
                self.backwards += 1
                reached = (grad.detach().reshape(-1, CLASSES) != 0).any(dim=1).tolist()
                for example, used in zip(found, reached, strict=True):
                    if not used:
                        continue
                    if example is None:
                        self.unknown += 1
                    elif example[0]:
                        self.val_counts[example[1]] += 1
                    else:
                        self.fresh_counts[example[1]] += 1

            output.register_hook(count)  # type: ignore[no-untyped-call]

        return watch_logits

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def record(self) -> dict[str, torch.Tensor]:
        return {
            "fresh_counts": self.fresh_counts.clone(),
            "val_counts": self.val_counts.clone(),
            "unknown": torch.tensor([self.unknown]),
            "backwards": torch.tensor([self.backwards]),
        }


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    model = fresh_model(problem)
    counter = ExampleCounter(model, problem)
    try:
        learner.train(
            model,
            problem.train_x.clone(),
            problem.train_y.clone(),
            problem.val.features.clone(),
            problem.val.labels.clone(),
            report,
        )
    finally:
        counter.remove()
    return CaseOutput(weights=state_of(model), tensors=counter.record())
