"""The training loop of "Optimizer membership": parameters that get gradients but no updates.

Kept apart from the drill's description (drills/optimizer_membership.py) so that only a worker
process that actually trains imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.core.contract import DrillOutcome, Reporter, SignatureValue
from drills.kit.audit import ParameterAudit
from drills.kit.backbone_head import (
    BackboneAndHead,
    BackboneHeadConfig,
    describe_inputs,
    make_data,
    snapshot,
    step_size,
)
from drills.kit.curves import tail_mean
from drills.kit.tables import Cell, table

PARTS = ("backbone", "head")

# Every run reports every key (None where a number does not apply), so records line up.
SIGNATURE_KEYS = (
    "model_params",
    "in_optimizer",
    "not_in_optimizer",
    "stale_optimizer_tensors",
    "grad_but_no_update",
    "backbone_grad_but_no_update",
    "head_grad_but_no_update",
    "backbone_update_norm",
    "head_update_norm",
    "initial_loss",
    "final_loss",
    "chance_loss",
)


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
    config = MembershipConfig(exclude=knobs["exclude"])
    data = make_data(config, seed)
    model = BackboneAndHead(config)
    optimizer = torch.optim.Adam(parameters_to_optimize(model, config.exclude), lr=config.lr)
    if config.exclude == "head-replaced-after":
        # e.g. a new classification head for a different label set, fitted after the optimizer
        # was built: the optimizer still holds the old head's tensors, which nothing uses now.
        model.head = nn.Linear(config.hidden, config.classes)
    # The audit reads the model as it is now and asks the optimizer about each live parameter.
    audit = ParameterAudit(model, optimizer)

    losses: list[float] = []
    for step in range(config.steps):
        loss = F.cross_entropy(model(data.features), data.labels)
        losses.append(loss.item())
        report.metric("loss", step, losses[-1])

        before = {part: snapshot(model, part) for part in PARTS}
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        audit.after_backward()
        optimizer.step()
        for part, weights in before.items():
            report.metric(f"update@{part}", step, step_size(model, part, weights))

    rows = audit.rows()
    signature = build_signature(config, model, optimizer, rows)
    signature |= {"initial_loss": losses[0], "final_loss": tail_mean(losses)}
    diagnostics = {"parameters": rows, "tables": [optimizer_table(model, optimizer)]}
    return DrillOutcome(signature, diagnostics, describe_inputs(data, config.classes))


def has_grad_but_no_update(row: dict[str, Any]) -> bool:
    return bool(row["grad"] == "finite" and row["grad_norm"] > 0 and row["update_norm"] == 0)


def stale_tensors(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """Tensors the optimizer would update that are not (or no longer) parameters of the model."""
    live = {id(p) for p in model.parameters()}
    held = [p for group in optimizer.param_groups for p in group["params"]]
    return [p for p in held if id(p) not in live]


def build_signature(
    config: MembershipConfig,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    rows: list[dict[str, Any]],
) -> dict[str, SignatureValue]:
    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    signature |= {
        "model_params": len(rows),
        "in_optimizer": sum(row["in_optimizer"] for row in rows),
        "not_in_optimizer": sum(not row["in_optimizer"] for row in rows),
        "stale_optimizer_tensors": len(stale_tensors(model, optimizer)),
        "grad_but_no_update": sum(has_grad_but_no_update(row) for row in rows),
        "chance_loss": math.log(config.classes),
    }
    for part in PARTS:
        part_rows = [row for row in rows if row["name"].startswith(f"{part}.")]
        signature |= {
            f"{part}_grad_but_no_update": sum(has_grad_but_no_update(row) for row in part_rows),
            f"{part}_update_norm": math.sqrt(sum(row["update_norm"] ** 2 for row in part_rows)),
        }
    return signature


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
