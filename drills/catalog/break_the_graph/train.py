"""The training loop of "Break the graph": a backbone + head classifier with a cut in its graph.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drills.catalog.break_the_graph.signature import BreakSignature
from drills.core.contract import DrillError, DrillOutcome, Reporter
from drills.kit.backbone_head import (
    BackboneAndHead,
    BackboneHeadConfig,
    Data,
    describe_inputs,
    make_data,
    snapshot,
    step_size,
)
from drills.kit.run import Run
from drills.kit.tables import table

UPSTREAM, DOWNSTREAM = "backbone", "head"  # the cut sits between these two parts


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
    config = BreakConfig.sized(knobs, cut=knobs["cut"])
    run = Run(seed, report)
    data = make_data(config, run.data_rng)
    model = BackboneAndHead(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    inputs = describe_inputs(data, config.classes)

    graph: dict[str, Any] | None = None
    output_has_grad_fn = True
    for step in range(config.steps):
        result = forward(model, data, config.cut)
        if graph is None:
            graph = graph_table(data, result)
        run.log("loss", step, result.loss.item())  # a number, with or without a graph
        if result.loss.grad_fn is None:
            raise nothing_to_backpropagate(config, run, result, graph, inputs)
        output_has_grad_fn = output_has_grad_fn and result.logits.grad_fn is not None

        before = {part: snapshot(model, part) for part in (UPSTREAM, DOWNSTREAM)}
        optimizer.zero_grad(set_to_none=True)
        result.loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        for part, weights in before.items():
            run.log(f"update@{part}", step, step_size(model, part, weights))

    # Every step's loss had a grad_fn, or we would have stopped above.
    signature = graph_signature(
        config, run, output_has_grad_fn=output_has_grad_fn, loss_has_grad_fn=True
    )
    signature.steps_run = len(run.values("loss"))
    signature.final_loss = run.tail_mean("loss")
    return run.outcome(signature, inputs=inputs, tables=[graph] if graph else [])


def nothing_to_backpropagate(
    config: BreakConfig,
    run: Run,
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

    signature = graph_signature(
        config, run, output_has_grad_fn=output_has_grad_fn, loss_has_grad_fn=False
    )
    signature.steps_run = 0
    outcome = run.outcome(
        signature, inputs=inputs, error=message, tables=[graph], torch_error=torch_says
    )
    return DrillError(message, outcome=outcome)


@dataclass(frozen=True)
class PartMovement:
    """What the audit says about one side of the cut."""

    params: int  # parameter tensors in the part
    grad_none: int  # ... whose .grad stayed None
    updated: int  # ... that moved at all
    update_norm: float  # L2 norm of the part's total change


def part_movement(rows: list[dict[str, Any]], part: str) -> PartMovement:
    part_rows = [row for row in rows if row["name"].startswith(f"{part}.")]
    return PartMovement(
        params=len(part_rows),
        grad_none=sum(row["grad"] == "none" for row in part_rows),
        updated=sum(row["update_norm"] > 0 for row in part_rows),
        update_norm=math.sqrt(sum(row["update_norm"] ** 2 for row in part_rows)),
    )


def graph_signature(
    config: BreakConfig, run: Run, *, output_has_grad_fn: bool, loss_has_grad_fn: bool
) -> BreakSignature:
    """The numbers every run reports, whether or not it could backpropagate."""
    rows = run.parameter_rows()
    upstream, downstream = part_movement(rows, UPSTREAM), part_movement(rows, DOWNSTREAM)
    return BreakSignature(
        upstream_params=upstream.params,
        upstream_grad_none=upstream.grad_none,
        upstream_updated=upstream.updated,
        upstream_update_norm=upstream.update_norm,
        downstream_params=downstream.params,
        downstream_grad_none=downstream.grad_none,
        downstream_updated=downstream.updated,
        downstream_update_norm=downstream.update_norm,
        output_has_grad_fn=output_has_grad_fn,
        loss_has_grad_fn=loss_has_grad_fn,
        initial_loss=run.first("loss"),
        chance_loss=math.log(config.classes),
    )


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
