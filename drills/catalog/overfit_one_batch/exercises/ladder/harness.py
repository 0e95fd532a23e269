"""Runs inside the sandbox with the learner's file: calls overfit_ladder() once on a hidden set,
with a make_model() that records every network it builds, and sends back the weights of the
three networks the ladder returned (values "<rung>:<name>": each rung's are checked on their
own outside, so one rung that blew up does not hide the others) and which built network each
one is. The checks read the weights only: nothing the learner's code says about its losses
counts."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

import torch
from torch import nn

from drills.catalog.overfit_one_batch.exercises.ladder.problem import RUNGS, build, make_net
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, state_of


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(case, seed)
    built: list[nn.Module] = []

    def make_model() -> nn.Module:
        net = make_net(problem.shape, seed, len(built))
        built.append(net)
        return net

    returned = learner.overfit_ladder(
        make_model, problem.features.clone(), problem.labels.clone(), report
    )
    if not isinstance(returned, Mapping) or set(returned) != set(RUNGS):
        raise ContractError(
            "overfit_ladder must return a dict with one trained model per rung, keys 1, 2 and 5"
        )
    weights: dict[str, torch.Tensor] = {}
    numbers = []
    for rung in RUNGS:
        found = [number for number, net in enumerate(built) if net is returned[rung]]
        if not found:
            raise ContractError(
                f"the model returned for {rung} example(s) is not one make_model() built"
            )
        numbers.append(found[0])
        weights |= {f"{rung}:{name}": t for name, t in state_of(returned[rung]).items()}
    return CaseOutput(weights={}, tensors={**weights, "built": torch.tensor(numbers)})
