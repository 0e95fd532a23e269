"""Cases on the optimizer-membership drill: a part of the model that gets gradients and never
moves, against a model that trains, told apart by what each part did in each step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart


def which_part_stood_still(signature: Mapping[str, Any], error: str | None) -> str:
    """Read off the per-part update sizes: which part never moved."""
    backbone = signature.get("backbone_update_norm") or 0.0
    head = signature.get("head_update_norm") or 0.0
    if backbone == 0.0 and head == 0.0:
        return "nothing-moved"
    if backbone == 0.0:
        return "backbone-still"
    if head == 0.0:
        return "head-still"
    return "all-moved"


def optimizer_inventory(signature: Mapping[str, Any], error: str | None) -> str:
    """Compare the optimizer's tensors with the model's: missing ones, stale ones, or neither."""
    if signature.get("stale_optimizer_tensors"):
        return "holds-stale-tensors"
    if signature.get("not_in_optimizer"):
        return "misses-model-tensors"
    return "holds-every-tensor"


CASE_SET = CaseSet(
    drill="optimizer-membership",
    causes=(
        Cause(
            "nothing-wrong",
            "healthy",
            "Nothing is wrong: every parameter is trained.",
            {"exclude": "none"},
            "all-optimized",
        ),
        Cause(
            "head-not-optimized",
            "optimizer",
            "The optimizer was built without the head's parameters.",
            {"exclude": "head"},
            "head-left-out",
        ),
        Cause(
            "backbone-not-optimized",
            "optimizer",
            "The optimizer was built without the backbone's parameters.",
            {"exclude": "backbone"},
            "backbone-left-out",
        ),
        Cause(
            "optimizer-holds-old-head",
            "optimizer",
            "The head was replaced after the optimizer was built, so it updates the old one.",
            {"exclude": "head-replaced-after"},
            "stale-optimizer",
        ),
    ),
    experiments=(
        Experiment(
            "parameter-health",
            "Per-parameter health table",
            "For every parameter tensor: does it get a gradient, and does the optimizer step "
            "change it?",
            shows=("parameters",),
        ),
        Experiment(
            "update-sizes",
            "How far each part moves",
            "Log the size of each optimizer step for the backbone and the head separately.",
            shows=("numbers",),
            observations=("backbone_update_norm", "head_update_norm"),
            reading=which_part_stood_still,
        ),
        Experiment(
            "optimizer-inventory",
            "Compare the optimizer's tensors with the model's",
            "List the tensors the optimizer holds and check each one against the model's "
            "current parameters.",
            shows=("numbers",),
            observations=(
                "model_params",
                "in_optimizer",
                "not_in_optimizer",
                "stale_optimizer_tensors",
            ),
            reading=optimizer_inventory,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the training is sound.", Change()),
        Fix(
            "optimize-all-parameters",
            "Build the optimizer from model.parameters(), not from one part.",
            Change(replace={"exclude": {"head": "none", "backbone": "none"}}),
        ),
        Fix(
            "rebuild-after-replacing",
            "Build the optimizer after replacing the head.",
            Change(replace={"exclude": {"head-replaced-after": "none"}}),
        ),
        Fix(
            "unfreeze-backbone",
            "Set requires_grad=True on the backbone's parameters.",
            Change(),  # they already have gradients: a plausible change that alters nothing
        ),
    ),
    charts=(ShownChart("Training loss", "loss", {"loss": "training loss"}),),
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "frozen-features",
        "The loss that stops short of zero",
        "You bolted a fresh classification head onto a small feature extractor and trained the "
        "whole thing on one fixed batch, expecting it to memorise the batch. The loss fell "
        "quickly at first, then flattened far above zero. No error, no warning.",
        CASE_SET,
        cause="backbone-not-optimized",
        fix="optimize-all-parameters",
    ),
    Case(
        "swapped-head",
        "A fine curve and an unchanged checkpoint",
        "After building the model and its optimizer you swapped in a head with the right number "
        "of classes, then trained on one batch. The loss went to zero, but a colleague diffing "
        "the saved weights says part of the model is identical to its initialisation.",
        CASE_SET,
        cause="optimizer-holds-old-head",
        fix="rebuild-after-replacing",
    ),
    Case(
        "memorised-batch",
        "A batch learned by heart",
        "A teammate asks you to check a small classifier before they scale it up. On one fixed "
        "batch its loss fell to almost zero within a few hundred steps. They want to know "
        "whether anything is wrong before they spend a day of compute.",
        CASE_SET,
        cause="nothing-wrong",
        fix="change-nothing",
    ),
)
