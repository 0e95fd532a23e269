"""Optimizer membership: a parameter the optimizer does not hold gets gradients and never moves.

`loss.backward()` fills in `.grad` for every parameter the loss depends on; `optimizer.step()`
updates only the tensors the optimizer was given when it was built. A parameter left out of
that list (or a module replaced afterwards) has a healthy gradient and stays exactly as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.optimizer_membership.signature import MembershipSignature
from drills.core.backbone_head_knobs import SIZE_KNOBS
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

EXCLUSIONS = ("none", "head", "backbone", "head-replaced-after")


class OptimizerMembership(Drill):
    slug = "optimizer-membership"
    position = 50
    title = "Optimizer membership"
    summary = "Gradients are not updates: a parameter the optimizer does not hold never moves."
    symptom = (
        "Every gradient looks healthy, yet part of the model has not changed since initialisation."
    )
    scenario = (
        "A classifier made of a backbone (two layers) and a head (one layer) trains with Adam "
        "for 200 steps on one fixed batch of 64 examples (16 features, 4 classes). The "
        "optimizer may have been built with only part of the model, or the head may have been "
        "swapped for a new one after the optimizer was built. Choose what is left out, predict "
        "which parameters move and what the loss does, then run it. A backbone left out gives "
        "a loss curve bit-identical to break-the-graph's detached backbone output: same data, "
        "same start, and in both only the head learns. Only the parameter audit tells them "
        "apart: here the backbone has a gradient and an update of exactly 0; after a cut in "
        "the graph its gradient is None."
    )
    version = "2"
    healthy = "all-optimized"
    signature_type = MembershipSignature
    knobs = (
        Knob(
            "exclude",
            "choice",
            "none",
            "What the optimizer does not hold: nothing; the head (built with "
            "model.backbone.parameters()); the backbone (built with model.head.parameters()); "
            "the live head: the optimizer got every parameter, then model.head was replaced by "
            "a new layer, so it holds the old head's tensors instead.",
            choices=EXCLUSIONS,
        ),
        *SIZE_KNOBS,
    )
    hypotheses = (
        Hypothesis(
            "all-optimized",
            "The optimizer holds every parameter: every gradient turns into an update and the "
            "loss goes to about zero.",
        ),
        Hypothesis(
            "head-left-out",
            "The head gets gradients but never moves; the backbone learns around the frozen "
            "random head, so the loss can still fall a long way.",
        ),
        Hypothesis(
            "backbone-left-out",
            "The backbone gets gradients but never moves; only the head learns, on frozen "
            "random features, so the loss falls only as far as they allow: it stalls well above "
            "zero on a narrow backbone and gets close to zero on a wide one.",
        ),
        Hypothesis(
            "stale-optimizer",
            "The optimizer holds tensors the model no longer uses (a replaced head): the live "
            "head is not among them, gets gradients and never moves.",
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
        Observation("grad_but_no_update", "Parameters with a gradient but no update"),
        Observation("backbone_grad_but_no_update", "... of them in the backbone"),
        Observation("head_grad_but_no_update", "... of them in the head"),
        Observation("not_in_optimizer", "Model parameters the optimizer does not hold"),
        Observation("stale_optimizer_tensors", "Optimizer tensors that are not in the model"),
        Observation("backbone_update_norm", "How far the backbone moved in total"),
        Observation("head_update_norm", "How far the head moved in total"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("stale_optimizer_tensors"):
            return "stale-optimizer"
        backbone = signature.get("backbone_grad_but_no_update") or 0
        head = signature.get("head_grad_but_no_update") or 0
        if backbone and backbone >= head:
            return "backbone-left-out"
        if head:
            return "head-left-out"
        return "all-optimized"


DRILL = OptimizerMembership()
