"""Runs inside the sandbox with the learner's file: train() once per hidden run on the judge's
model and data, watched by a recorder that notes, at the start of every step, which examples of
the data went into the model and the weights they met. The trained weights and that record go
back; the judge re-reads both outside and trusts neither (checks.py, reading.py)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch
from torch import nn

from drills.catalog.loss_spikes.exercises.wrong_labels.problem import (
    MAX_STEPS,
    build,
    fresh_model,
)
from drills.exercises.running import CaseOutput, Report, state_of

UNKNOWN = -2  # a row that is not an example of the data as given (its features were changed)


def flat_weights(model: nn.Module) -> torch.Tensor:
    return torch.cat([t.detach().flatten() for t in model.state_dict().values()]).clone()


class StepRecorder:
    """A forward hook on the model's first layer, the one every forward pass goes through. A
    step starts at a forward pass with gradients on, unless it runs on some of the examples of
    the step before at unchanged weights (a loop that looks at a batch, then trains on part of
    it, makes one step). Passes without gradients (evaluation, probes) are not steps."""

    def __init__(self, model: nn.Module, inputs: torch.Tensor) -> None:
        self.model = model
        self.first = model.get_submodule("net.0")
        rows = inputs.flatten(0, 1)
        self.index = {tuple(row.tolist()): i for i, row in enumerate(rows)}
        self.width = len(rows)
        self.initial = flat_weights(model)
        self.weights: list[torch.Tensor] = []
        self.rows: list[set[int]] = []
        self.moved = False  # the weights left their initial values since the record began
        self.overflow = False
        self.handle = self.first.register_forward_pre_hook(self.on_forward)

    def on_forward(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        # A copy of the model (copy.deepcopy keeps its hooks) is not the model being judged.
        if module is not self.first or not torch.is_grad_enabled():
            return
        rows = self.identify(args[0] if args else None)
        now = flat_weights(self.model)
        at_start = torch.equal(now, self.initial)
        if at_start and self.moved:
            # The weights were put back to their initial values: training starts over, and
            # what ran before (a probe on this very model) is not part of the judged run.
            self.weights.clear()
            self.rows.clear()
            self.moved = self.overflow = False
        self.moved |= not at_start
        if self.weights and rows <= self.rows[-1] and torch.equal(now, self.weights[-1]):
            return  # the same step, on part of the same examples
        if len(self.weights) >= MAX_STEPS:
            self.overflow = True
            return
        self.weights.append(now)
        self.rows.append(rows)

    def identify(self, inputs: object) -> set[int]:
        if not isinstance(inputs, torch.Tensor) or inputs.dim() != 2:
            return {UNKNOWN}
        return {self.index.get(tuple(row.tolist()), UNKNOWN) for row in inputs.detach()}

    def record(self) -> dict[str, torch.Tensor]:
        rows = torch.full((len(self.rows), self.width), -1, dtype=torch.int64)
        for step, found in enumerate(self.rows):
            listed = sorted(found)[: self.width]
            rows[step, : len(listed)] = torch.tensor(listed, dtype=torch.int64)
        empty = torch.empty(0, len(self.initial))
        return {
            "weights_at": torch.stack(self.weights) if self.weights else empty,
            "rows": rows,
            "overflow": torch.tensor([int(self.overflow)]),
        }


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    model = fresh_model(problem)
    recorder = StepRecorder(model, problem.inputs)
    try:
        learner.train(model, problem.inputs.clone(), problem.labels.clone(), report)
    finally:
        recorder.handle.remove()
    return CaseOutput(weights=state_of(model), tensors=recorder.record())
