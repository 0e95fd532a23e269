"""The training loop of "Optimizer membership": parameters that get gradients but no updates.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.optimizer_membership.signature import MembershipSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.backbone_head import (
    BackboneAndHead,
    BackboneHeadConfig,
    describe_inputs,
    make_data,
    snapshot,
    step_size,
)
from drills.kit.run import Run
from drills.kit.tables import Cell, table

PARTS = ("backbone", "head")


@dataclass(frozen=True)
class MembershipConfig(BackboneHeadConfig):
    exclude: str = "none"


def parameters_to_optimize(model: BackboneAndHead, exclude: str) -> Iterator[nn.Parameter]:
    """What the optimizer is built with: the bug is in this list, not in the model."""
    if exclude == "head":
        return model.backbone.parameters()
    if exclude == "backbone":
        return model.head.parameters()
    return model.parameters()


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on one fixed batch with part of the model missing from the optimizer."""
    config = MembershipConfig.sized(knobs, exclude=knobs["exclude"])
    run = Run(seed, report)
    data = make_data(config, run.data_rng)
    model = BackboneAndHead(config)
    optimizer = torch.optim.Adam(parameters_to_optimize(model, config.exclude), lr=config.lr)
    if config.exclude == "head-replaced-after":
        # e.g. a new classification head for a different label set, fitted after the optimizer
        # was built: the optimizer still holds the old head's tensors, which nothing uses now.
        model.head = nn.Linear(config.hidden, config.classes)
    # The audit reads the model as it is now and asks the optimizer about each live parameter.
    run.watch(model, optimizer)

    for step in range(config.steps):
        loss = F.cross_entropy(model(data.features), data.labels)
        run.log("loss", step, loss.item())

        before = {part: snapshot(model, part) for part in PARTS}
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        for part, weights in before.items():
            run.log(f"update@{part}", step, step_size(model, part, weights))

    signature = membership_signature(config, model, optimizer, run.parameter_rows())
    signature.initial_loss = run.first("loss")
    signature.final_loss = run.tail_mean("loss")
    return run.outcome(
        signature,
        inputs=describe_inputs(data, config.classes),
        tables=[optimizer_table(model, optimizer)],
    )


def has_grad_but_no_update(row: dict[str, Any]) -> bool:
    return bool(row["grad"] == "finite" and row["grad_norm"] > 0 and row["update_norm"] == 0)


def stale_tensors(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """Tensors the optimizer would update that are not (or no longer) parameters of the model."""
    live = {id(p) for p in model.parameters()}
    held = [p for group in optimizer.param_groups for p in group["params"]]
    return [p for p in held if id(p) not in live]


def membership_signature(
    config: MembershipConfig,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    rows: list[dict[str, Any]],
) -> MembershipSignature:
    def part_rows(part: str) -> list[dict[str, Any]]:
        return [row for row in rows if row["name"].startswith(f"{part}.")]

    def update_norm(part: str) -> float:
        return math.sqrt(sum(row["update_norm"] ** 2 for row in part_rows(part)))

    return MembershipSignature(
        model_params=len(rows),
        in_optimizer=sum(row["in_optimizer"] for row in rows),
        not_in_optimizer=sum(not row["in_optimizer"] for row in rows),
        stale_optimizer_tensors=len(stale_tensors(model, optimizer)),
        grad_but_no_update=sum(has_grad_but_no_update(row) for row in rows),
        backbone_grad_but_no_update=sum(map(has_grad_but_no_update, part_rows("backbone"))),
        head_grad_but_no_update=sum(map(has_grad_but_no_update, part_rows("head"))),
        backbone_update_norm=update_norm("backbone"),
        head_update_norm=update_norm("head"),
        chance_loss=math.log(config.classes),
    )


def optimizer_table(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Every tensor the optimizer holds, and which model parameter (if any) it is."""
    names = {id(p): name for name, p in model.named_parameters()}
    rows: list[list[Cell]] = []
    for group_index, group in enumerate(optimizer.param_groups):
        for position, tensor in enumerate(group["params"]):
            rows.append(
                [
                    f"group {group_index}, #{position}",
                    "x".join(str(size) for size in tensor.shape),
                    names.get(id(tensor), "(not in the model)"),
                    tensor.grad is not None,
                ]
            )
    return table(
        "optimizer",
        "What the optimizer holds",
        ["optimizer tensor", "shape", "model parameter", "has a gradient"],
        rows,
        note=(
            "The optimizer keeps references to the tensors it was built with. A parameter "
            "missing here is never updated, whatever its gradient."
        ),
    )
