"""Cases on the break-the-graph drill: a classifier that learns its batch, or whose training
stops at the first backward. The backbone is wide (512 features), so a head on its frozen random
features learns the batch almost as well as the whole model: the loss cannot tell a detached
backbone from an intact graph (final loss 0.005-0.015 against under 1e-5 over 200-400 steps:
both "learned the batch" to a learner without a baseline). Which parts move, which
tensors still carry a grad_fn, and the per-parameter audit tell the causes apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart


def which_parts_moved(signature: Mapping[str, Any], error: str | None) -> str:
    """Backbone and head: did either move over the run?"""
    backbone, head = (
        signature.get("upstream_updated") or 0,
        signature.get("downstream_updated") or 0,
    )
    if backbone and head:
        return "both-moved"
    if head:
        return "only-head-moved"
    if backbone:
        return "only-backbone-moved"
    return "nothing-moved"


def where_grad_fn_ends(signature: Mapping[str, Any], error: str | None) -> str:
    """Do the logits and the loss carry a grad_fn (the record backward follows)?"""
    logits, loss = signature.get("output_has_grad_fn"), signature.get("loss_has_grad_fn")
    if loss:
        return "loss-carries-grad-fn"
    if logits:
        return "logits-have-it-loss-does-not"
    return "neither-has-one"


def how_far_the_loss_fell(signature: Mapping[str, Any], error: str | None) -> str:
    final, chance = signature.get("final_loss"), signature.get("chance_loss")
    if final is None or chance is None:
        return "no-training-step"
    if final < 0.1:
        return "near-zero"
    return "part-way" if final < 0.9 * chance else "barely"


CASE_SET = CaseSet(
    drill="break-the-graph",
    causes=(
        Cause(
            "graph-whole",
            "healthy",
            "Nothing is wrong: the loss reaches every parameter through the graph.",
            {"cut": "none"},
            "intact",
            fix="change-nothing",
        ),
        Cause(
            "features-detached",
            "graph",
            "The backbone's output is detached before the head reads it, so no gradient "
            "reaches the backbone.",
            {"cut": "detach-hidden"},
            "cut-below-head",
            fix="keep-features-attached",
            exercise="graph-detached-features",
        ),
        Cause(
            "loss-from-number",
            "graph",
            "The loss is rebuilt from its Python number (torch.tensor(loss.item())), so it has "
            "no record of how it was computed.",
            {"cut": "loss-from-item"},
            "loss-rebuilt",
            fix="backward-the-real-loss",
        ),
        Cause(
            "forward-without-recording",
            "graph",
            "The forward pass and the loss run under torch.no_grad(), so no graph is recorded "
            "at all.",
            {"cut": "no-grad-forward"},
            "no-graph",
            fix="record-the-forward",
        ),
    ),
    experiments=(
        Experiment(
            "parameter-audit",
            "Per-parameter health table",
            "For every parameter tensor: is its gradient None, zero or finite, and did the "
            "optimizer step change it?",
            shows=("parameters",),
        ),
        Experiment(
            "part-movement",
            "Which parts moved",
            "Count the backbone and head tensors whose weights changed over the run.",
            shows=("numbers",),
            observations=(
                "upstream_updated",
                "upstream_update_norm",
                "downstream_updated",
                "downstream_update_norm",
            ),
            reading=which_parts_moved,
        ),
        Experiment(
            "follow-grad-fn",
            "Follow grad_fn from the loss back to the inputs",
            "Print requires_grad and grad_fn of each tensor of the first forward pass, from the "
            "inputs to the loss.",
            shows=("tables", "numbers"),
            observations=("output_has_grad_fn", "loss_has_grad_fn"),
            reading=where_grad_fn_ends,
        ),
        Experiment(
            "loss-against-chance",
            "Compare the loss with chance",
            "Set the first and final loss beside ln(4), the loss of a model that knows nothing.",
            shows=("numbers",),
            observations=("initial_loss", "final_loss", "chance_loss"),
            reading=how_far_the_loss_fell,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the graph is whole.", Change()),
        Fix(
            "keep-features-attached",
            "Feed the head the backbone's output itself, without .detach().",
            Change(replace={"cut": {"detach-hidden": "none"}}),
        ),
        Fix(
            "backward-the-real-loss",
            "Call backward on the loss tensor itself; log loss.item() separately.",
            Change(replace={"cut": {"loss-from-item": "none"}}),
        ),
        Fix(
            "record-the-forward",
            "Run the training forward pass outside torch.no_grad(); keep no_grad for evaluation.",
            Change(replace={"cut": {"no-grad-forward": "none"}}),
        ),
        Fix(
            "loss-requires-grad",
            "Call loss.requires_grad_(True) before backward so that it runs.",
            Change(),  # it silences the error and reaches no parameter: nothing improves
        ),
        Fix(
            "higher-learning-rate",
            "Raise the learning rate: the backbone learns too slowly to be seen.",
            Change(),  # the drill fixes Adam's rate; a missing gradient is not a slow one
        ),
    ),
    charts=(ShownChart("Loss on the batch", "loss", {"loss": "training loss"}),),
    # A wide backbone: a head on its frozen random features can learn the batch almost as well
    # as the whole model, so how far the loss falls does not tell which part learned.
    base={"width": 512},
    nuisance={"steps": (200, 300, 400)},
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "a-split-classifier",
        "A classifier split in two",
        "You split a classifier into a feature extractor and a small head so you could log the "
        "features. Before going on, you train it on one batch of 64 that the old version "
        "memorised, to check that the split changed nothing.",
        CASE_SET,
        causes=("features-detached", "graph-whole"),
    ),
    Case(
        "first-step-crash",
        "Training dies at the first backward",
        "After tidying your training loop, the very first call to backward() raises an error about"
        " a tensor that does not require grad. The forward pass runs and prints a sensible loss.",
        CASE_SET,
        causes=("loss-from-number", "forward-without-recording"),
    ),
)
