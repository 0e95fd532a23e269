"""Break the graph: a cut in the autograd graph silently stops everything before it learning.

Backward follows the record of operations that produced the loss. Whatever leaves that record
(a `.detach()`, a trip through plain numbers, a forward pass under `no_grad`) stops it: the
parameters before the cut get no gradient at all, while those after it keep learning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.break_the_graph.signature import BreakSignature
from drills.core.backbone_head_knobs import SIZE_KNOBS
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

CUTS = ("none", "detach-hidden", "loss-from-item", "numpy-roundtrip", "no-grad-forward")


class BreakTheGraph(Drill):
    slug = "break-the-graph"
    position = 20
    title = "Break the graph"
    summary = "A cut in the autograd graph: parameters before it get no gradient and never move."
    symptom = (
        "The loss falls a little and then stalls, or training stops at once with an error "
        "about a tensor without a grad_fn."
    )
    scenario = (
        "A classifier made of a backbone (two layers) and a head (one layer) trains with Adam "
        "for 200 steps on one fixed batch of 64 examples (16 features, 4 classes); an intact "
        "model memorises it. Somewhere between the data and the loss the code may cut the "
        "graph that backward follows. Pick a cut, predict which parameters still get a "
        "gradient and how far the loss falls, then run it. Mind the twins: a detached backbone "
        "output and a round trip through plain numbers give the very same run, bit for bit, "
        "and their loss curve is also bit-identical to a backbone left out of the optimizer "
        "(the optimizer-membership drill). The loss cannot tell these bugs apart; the "
        "parameter audit can: after a cut the backbone's gradient is None, while a backbone "
        "the optimizer does not hold has a gradient and an update of exactly 0."
    )
    version = "2"
    healthy = "intact"
    signature_type = BreakSignature
    knobs = (
        Knob(
            "cut",
            "choice",
            "none",
            "Where the graph is cut: none; the backbone's output is detached before the head "
            "reads it; the loss is rebuilt as torch.tensor(loss.item()); the backbone's output "
            "makes a round trip through plain numbers (.tolist() and back with torch.tensor; "
            "NumPy is not installed here, and .detach().numpy() then torch.from_numpy() does "
            "exactly the same to the graph); the forward pass and loss run under "
            "torch.no_grad().",
            choices=CUTS,
        ),
        *SIZE_KNOBS,
    )
    hypotheses = (
        Hypothesis(
            "intact",
            "The graph is whole: every parameter gets a gradient and moves, and the loss on "
            "the batch goes to about zero.",
        ),
        Hypothesis(
            "cut-below-head",
            "The graph is cut between backbone and head: the backbone's gradients are None and "
            "its weights never change, while the head keeps learning on frozen random features, "
            "so the loss falls only as far as a head on random features can take it: part of "
            "the way on a narrow backbone, nearly to zero on a wide one.",
        ),
        Hypothesis(
            "loss-rebuilt",
            "The model's output still has a graph, but the loss was rebuilt from a plain number: "
            "it has no grad_fn, backward has nothing to follow, and no parameter gets a gradient.",
        ),
        Hypothesis(
            "no-graph",
            "No graph was recorded at all: not even the model's output has a grad_fn, so the "
            "loss has none either and backward cannot run.",
        ),
    )
    charts = (
        Chart("loss", "Training loss", ("loss",), "loss", labels={"loss": "training loss"}),
        Chart(
            "update",
            "How far each part moved in each optimizer step",
            ("update@*",),
            "L2 norm of the step",
            labels={"update@*": ""},
        ),
    )
    observations = (
        Observation("final_loss", "Final loss (mean of the last 10% of steps)"),
        Observation("initial_loss", "Loss at the first step", "chance_loss"),
        Observation("upstream_grad_none", "Backbone tensors whose gradient is None"),
        Observation("upstream_updated", "Backbone tensors that moved"),
        Observation("upstream_update_norm", "How far the backbone moved in total"),
        Observation("downstream_updated", "Head tensors that moved"),
        Observation("downstream_update_norm", "How far the head moved in total"),
        Observation("output_has_grad_fn", "The logits have a grad_fn"),
        Observation("loss_has_grad_fn", "The loss has a grad_fn"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("loss_has_grad_fn") is False:
            return "loss-rebuilt" if signature.get("output_has_grad_fn") else "no-graph"
        upstream, downstream = (
            signature.get("upstream_updated"),
            signature.get("downstream_updated"),
        )
        if upstream == 0 and downstream:
            return "cut-below-head"
        return "intact"


DRILL = BreakTheGraph()
