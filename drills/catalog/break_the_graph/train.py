"""The training loop of "Break the graph": a backbone + head classifier with a cut in its graph.

Kept apart from the drill's description (drills/break_the_graph.py) so that only a worker
process that actually trains imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drills.core.contract import DrillError, DrillOutcome, Reporter, SignatureValue
from drills.kit.audit import ParameterAudit
from drills.kit.backbone_head import (
    BackboneAndHead,
    BackboneHeadConfig,
    Data,
    describe_inputs,
    make_data,
    snapshot,
    step_size,
)
from drills.kit.curves import tail_mean
from drills.kit.tables import table

UPSTREAM, DOWNSTREAM = "backbone", "head"  # the cut sits between these two parts

# Every run reports every key (None where a number does not apply), so records line up.
SIGNATURE_KEYS = (
    "upstream_params",
    "upstream_grad_none",
    "upstream_updated",
    "upstream_update_norm",
    "downstream_params",
    "downstream_grad_none",
    "downstream_updated",
    "downstream_update_norm",
    "output_has_grad_fn",
    "loss_has_grad_fn",
    "steps_run",
    "initial_loss",
    "final_loss",
    "chance_loss",
)


@dataclass(frozen=True)
class BreakConfig(BackboneHeadConfig):
    cut: str = "none"


@dataclass(frozen=True)
class Forward:
    """The tensors of one forward pass, kept to show where the graph ends."""

    hidden: torch.Tensor  # the backbone's output
    head_input: torch.Tensor  # what the head actually receives
    logits: torch.Tensor
    loss: torch.Tensor


def forward(model: BackboneAndHead, data: Data, cut: str) -> Forward:
    """The forward pass and the loss, with the chosen cut in the graph."""
    if cut == "no-grad-forward":
        # Graph recording is off for everything computed inside: as in an evaluation loop.
        with torch.no_grad():
            return forward(model, data, "none")
    hidden = model.backbone(data.features)
    head_input = hidden
    if cut == "detach-hidden":
        head_input = hidden.detach()
    elif cut == "numpy-roundtrip":
        # What hidden.detach().numpy() followed by torch.from_numpy(...) does: a new tensor made
        # from plain numbers, with no record of how they were computed. A Python list stands in
        # for the NumPy array here.
        head_input = torch.tensor(hidden.tolist())
    logits = model.head(head_input)
    loss = F.cross_entropy(logits, data.labels)
    if cut == "loss-from-item":
        loss = torch.tensor(loss.item())  # e.g. a loss "cleaned up" for logging, then used
    return Forward(hidden, head_input, logits, loss)


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on one fixed batch with the chosen cut; see BreakTheGraph."""
    config = BreakConfig(cut=knobs["cut"])
    data = make_data(config, seed)
    model = BackboneAndHead(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    audit = ParameterAudit(model, optimizer)
    inputs = describe_inputs(data, config.classes)

    losses: list[float] = []
    graph: dict[str, Any] | None = None
    output_has_grad_fn = True
    for step in range(config.steps):
        result = forward(model, data, config.cut)
        if graph is None:
            graph = graph_table(data, result)
        loss_value = result.loss.item()
        report.metric("loss", step, loss_value)  # a number, with or without a graph
        if result.loss.grad_fn is None:
            raise nothing_to_backpropagate(config, audit, result, graph, inputs)
        losses.append(loss_value)
        output_has_grad_fn = output_has_grad_fn and result.logits.grad_fn is not None

        before = {part: snapshot(model, part) for part in (UPSTREAM, DOWNSTREAM)}
        optimizer.zero_grad(set_to_none=True)
        result.loss.backward()  # type: ignore[no-untyped-call]
        audit.after_backward()
        optimizer.step()
        for part, weights in before.items():
            report.metric(f"update@{part}", step, step_size(model, part, weights))

    rows = audit.rows()
    # Every step's loss had a grad_fn, or we would have stopped above.
    signature = build_signature(
        config, rows, output_has_grad_fn=output_has_grad_fn, loss_has_grad_fn=True
    )
    signature |= {
        "steps_run": len(losses),
        "initial_loss": losses[0],
        "final_loss": tail_mean(losses),
    }
    diagnostics = {"parameters": rows, "tables": [graph] if graph else []}
    return DrillOutcome(signature, diagnostics, inputs)


def nothing_to_backpropagate(
    config: BreakConfig,
    audit: ParameterAudit,
    result: Forward,
    graph: dict[str, Any],
    inputs: dict[str, Any],
) -> DrillError:
    """The clear error for a loss without a grad_fn, carrying the evidence gathered so far."""
    torch_says = None
    try:
        result.loss.backward()  # type: ignore[no-untyped-call]
    except RuntimeError as exc:  # what a learner would have seen instead of our message
        torch_says = str(exc)
    output_has_grad_fn = result.logits.grad_fn is not None
    if output_has_grad_fn:
        message = (
            "the loss has no grad_fn: it was rebuilt from a plain number (loss.item()), which "
            "keeps no record of how it was computed, although the logits still have one "
            f"(grad_fn={grad_fn_name(result.logits)}); there is nothing to backpropagate"
        )
    else:
        message = (
            "the loss has no grad_fn, and neither do the logits or anything else in the forward "
            "pass: it ran with graph recording switched off (torch.no_grad()), so no graph "
            "reaches any parameter; there is nothing to backpropagate"
        )
    if torch_says:
        message += f" (backward() says: {torch_says})"

    rows = audit.rows()
    signature = build_signature(
        config, rows, output_has_grad_fn=output_has_grad_fn, loss_has_grad_fn=False
    )
    signature |= {"steps_run": 0, "initial_loss": result.loss.item()}
    diagnostics = {"parameters": rows, "tables": [graph], "torch_error": torch_says}
    return DrillError(message, outcome=DrillOutcome(signature, diagnostics, inputs, message))


def build_signature(
    config: BreakConfig,
    rows: list[dict[str, Any]],
    *,
    output_has_grad_fn: bool,
    loss_has_grad_fn: bool,
) -> dict[str, SignatureValue]:
    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    for side, part in (("upstream", UPSTREAM), ("downstream", DOWNSTREAM)):
        part_rows = [row for row in rows if row["name"].startswith(f"{part}.")]
        signature |= {
            f"{side}_params": len(part_rows),
            f"{side}_grad_none": sum(row["grad"] == "none" for row in part_rows),
            f"{side}_updated": sum(row["update_norm"] > 0 for row in part_rows),
            f"{side}_update_norm": math.sqrt(sum(row["update_norm"] ** 2 for row in part_rows)),
        }
    signature |= {
        "output_has_grad_fn": output_has_grad_fn,
        "loss_has_grad_fn": loss_has_grad_fn,
        "chance_loss": math.log(config.classes),
    }
    return signature


def grad_fn_name(tensor: torch.Tensor) -> str | None:
    return None if tensor.grad_fn is None else type(tensor.grad_fn).__name__


def graph_table(data: Data, result: Forward) -> dict[str, Any]:
    tensors = (
        ("input features", data.features),
        ("backbone output (hidden)", result.hidden),
        ("what the head receives", result.head_input),
        ("logits", result.logits),
        ("loss", result.loss),
    )
    rows = [[name, t.requires_grad, grad_fn_name(t)] for name, t in tensors]
    return table(
        "graph",
        "Where the graph ends (first step)",
        ["tensor", "requires_grad", "grad_fn"],
        rows,
        note=(
            "A tensor with no grad_fn (and not a leaf that requires grad) is where backward "
            "stops: nothing before it can get a gradient through it."
        ),
    )
