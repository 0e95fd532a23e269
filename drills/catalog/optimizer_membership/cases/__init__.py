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
            fix="change-nothing",
        ),
        Cause(
            "head-not-optimized",
            "optimizer",
            "The optimizer was built without the head's parameters.",
            {"exclude": "head"},
            "head-left-out",
            fix="optimize-all-parameters",
        ),
        Cause(
            "backbone-not-optimized",
            "optimizer",
            "The optimizer was built without the backbone's parameters.",
            {"exclude": "backbone"},
            "backbone-left-out",
            fix="optimize-all-parameters",
        ),
        Cause(
            "optimizer-holds-old-head",
            "optimizer",
            "The head was replaced after the optimizer was built, so it updates the old one.",
            {"exclude": "head-replaced-after"},
            "stale-optimizer",
            fix="rebuild-after-replacing",
            exercise="optimizer-new-head",
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
    # A wide backbone: a head on its frozen random features can learn the batch almost as well
    # as the whole model, so how far the loss falls does not tell which part learned.
    base={"width": 512},
    nuisance={"steps": (200, 300, 400)},
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "a-fresh-head",
        "A fresh head on a feature extractor",
        "You bolted a fresh classification head onto a small feature extractor and trained the "
        "whole thing on one fixed batch, expecting it to memorise the batch. Check whether it did,"
        " and why.",
        CASE_SET,
        causes=("backbone-not-optimized", "head-not-optimized"),
    ),
    Case(
        "a-suspicious-checkpoint",
        "A fine curve and a suspicious checkpoint",
        "You fine-tuned a small classifier with a head sized for your classes on one batch, and "
        "the loss went to zero. A colleague who diffed the saved weights thinks part of the model "
        "may never have changed; they may be wrong.",
        CASE_SET,
        causes=("optimizer-holds-old-head", "head-not-optimized", "nothing-wrong"),
    ),
    Case(
        "memorised-batch",
        "A batch learned by heart",
        "A teammate asks you to check a small classifier before they scale it up. On one fixed "
        "batch its loss fell to almost zero within a few hundred steps. They want to know whether "
        "anything is wrong before they spend a day of compute.",
        CASE_SET,
        causes=("nothing-wrong", "head-not-optimized", "optimizer-holds-old-head"),
    ),
)
