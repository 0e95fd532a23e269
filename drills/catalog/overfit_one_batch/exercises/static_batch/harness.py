"""Runs inside the sandbox with the learner's file. A loader run hands batch_is_static() one
hidden loader and sends back its verdict. A seeded run calls seeded_overfit() three times (the
same seed twice, then another), with torch's and Python's global random state scrambled
differently before each call, and sends back what the judge's own loader and networks recorded:
the batches handed out, every forward's input, logits and dropout mask, and the first and last
weights. The learner's return value is only used to find which network was trained."""

from __future__ import annotations

import random
from types import ModuleType

import torch
from torch import nn

from drills.catalog.overfit_one_batch.exercises.static_batch.problem import (
    LOADERS,
    RUNS,
    STEPS,
    GlobalLoader,
    HiddenLoader,
    Recorded,
    SmallNet,
    run_seed,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    if case < len(LOADERS):
        verdict = learner.batch_is_static(HiddenLoader(LOADERS[case], seed))
        return CaseOutput(weights={}, tensors={"static": torch.tensor([as_verdict(verdict)])})
    tensors: dict[str, torch.Tensor] = {}
    for number, run in enumerate(RUNS):
        # Whatever state the last call left behind, the next starts from another: only the
        # learner's own seeding can make two calls agree.
        torch.manual_seed(seed + 7919 * (number + 1))
        random.seed(seed * 31 + number + 1)
        given = run_seed(seed) + (1 if run == "c" else 0)
        tensors |= seeded_run(learner, run, seed, given)
    return CaseOutput(weights={}, tensors=tensors)


def as_verdict(verdict: object) -> bool:
    if isinstance(verdict, torch.Tensor) and verdict.dtype == torch.bool and verdict.numel() == 1:
        return bool(verdict.item())
    if not isinstance(verdict, bool):
        raise ContractError(
            f"batch_is_static returned {type(verdict).__name__}; it must return True or False"
        )
    return verdict


def seeded_run(learner: ModuleType, run: str, seed: int, given: int) -> dict[str, torch.Tensor]:
    loader = GlobalLoader(seed)
    built: list[tuple[SmallNet, dict[str, torch.Tensor]]] = []

    def make_model() -> nn.Module:
        net = SmallNet()
        net.recorded = Recorded()
        built.append((net, state_of(net)))
        return net

    returned = learner.seeded_overfit(make_model, loader, given, STEPS)
    found = [(net, initial) for net, initial in built if net is returned]
    if not found:
        raise ContractError(
            "seeded_overfit must return the model it trained, the one make_model() built"
        )
    net, initial = found[0]
    recorded = net.recorded
    if not loader.handed:
        raise ContractError("seeded_overfit took no batch from the loader")
    if recorded is None or not recorded.inputs:
        raise ContractError("seeded_overfit never called the model in training mode")
    shapes = {tuple(x.shape) for x in recorded.inputs}
    if len(shapes) > 1:
        raise ContractError(
            f"seeded_overfit called the model on inputs of {len(shapes)} different shapes; "
            "train on the one batch, one forward per step"
        )
    features, labels = loader.handed[0]
    return {
        f"{run}:features": features,
        f"{run}:labels": labels,
        f"{run}:batches": torch.tensor([len(loader.handed)]),
        f"{run}:inputs": torch.stack(recorded.inputs),
        f"{run}:logits": torch.stack(recorded.logits),
        f"{run}:masks": torch.stack(recorded.masks),
        **{f"{run}:initial:{name}": t for name, t in initial.items()},
        **{f"{run}:final:{name}": t for name, t in state_of(net).items()},
    }
