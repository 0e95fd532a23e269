"""Cases on the padding-masks drill: one attention layer over padded batches, with the attention
mask and the loss mask each on or off. A loss that counts padding is mostly the padding's, easy
to predict, so its logged number ends small; a model that really learned ends small as well, and
once both are within a few hundredths of zero the curve cannot tell them apart. A loss that
counts padding also moves with how much padding a batch carries, as the real tokens' loss does
when attention reaches padding. Which positions the loss has a gradient for, and whether a
sequence's outputs are the same padded as alone, tell them apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.padding_masks import MOVED_OUTPUT, SAME_OUTPUT

# The logged loss is "the real tokens' loss" when the two differ by under a thousandth of it
# (the same mean taken twice: measured within 5e-8); a loss that counts padding logs 0.08-0.65
# of it at pad_to 16-128 on seeds 0-4.
SAME_LOSS = 1e-3


def which_positions_count(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the loss has a gradient at any padding position (autograd, first step)."""
    counted = signature.get("counted_padding")
    if counted is None:
        return "no-step-measured"
    return "padding-counted" if counted > 0 else "real-tokens-only"


def logged_against_real(signature: Mapping[str, Any], error: str | None) -> str:
    """The logged loss against the real tokens' loss on the same batches, at the end."""
    ratio = signature.get("logged_over_real")
    if ratio is None:
        return "no-step-measured"
    return "logged-is-real" if abs(ratio - 1.0) <= SAME_LOSS else "logged-differs"


def padded_against_alone(signature: Mapping[str, Any], error: str | None) -> str:
    """Held-out sequences, untrained weights: a real token's logits padded against alone."""
    shift = signature.get("first_output_shift")
    if shift is None:
        return "no-step-measured"
    if shift <= SAME_OUTPUT:
        return "same-output"
    return "output-moves" if shift >= MOVED_OUTPUT else "barely-moves"


def how_much_is_padding(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether most positions of the training batches are padding or real tokens."""
    share = signature.get("real_share")
    if share is None:
        return "no-step-measured"
    return "mostly-padding" if share < 0.5 else "mostly-real-tokens"


CASE_SET = CaseSet(
    drill="padding-masks",
    causes=(
        Cause(
            "padding-kept-out",
            "healthy",
            "Nothing is wrong: padding is kept out of attention and out of the loss, and the "
            "model, trained longer than before, has learned the task as far as its logged loss "
            "says.",
            {"pad_to": 128},
            "healthy",
            fix="change-nothing",
        ),
        Cause(
            "padding-counted",
            "loss",
            "The loss averages over every position of the padded batch: padding, easy to "
            "predict, outnumbers the real tokens and pulls the logged number down.",
            {"loss_mask": "all-positions", "pad_to": 128},
            "pad-counted",
            fix="mask-the-loss",
            exercise="padding-both-masks",
        ),
        Cause(
            "padding-counted-short",
            "loss",
            "The loss averages over every position of the padded batch, padding included: "
            "each batch's logged number depends on how much padding it carries.",
            {"loss_mask": "all-positions", "pad_to": 16},
            "pad-counted",
            fix="mask-the-loss",
            exercise="padding-both-masks",
        ),
        Cause(
            "padding-attended",
            "forward",
            "Attention is not masked: real tokens attend to padding, so what the model computes "
            "for a sequence depends on how much padding it is given.",
            {"attention_mask": "missing", "pad_to": 16},
            "pad-attended",
            fix="mask-attention",
            exercise="padding-both-masks",
        ),
    ),
    experiments=(
        Experiment(
            "gradient-positions",
            "Find the positions the loss depends on",
            "Take the gradient of the logged loss with respect to every position's logits on "
            "one batch: which positions does it reach, real tokens only or padding too?",
            shows=("numbers",),
            observations=("counted_positions", "counted_padding", "counted_padding_share"),
            reading=which_positions_count,
        ),
        Experiment(
            "loss-on-real-tokens",
            "Compute the loss on real tokens only",
            "From the same logits, average the cross-entropy over the real tokens alone and set "
            "it beside the logged loss.",
            shows=("numbers",),
            observations=("logged_loss", "real_token_loss", "padding_loss", "logged_over_real"),
            reading=logged_against_real,
        ),
        Experiment(
            "padded-against-alone",
            "Run held-out sequences padded and alone",
            "Run the same held-out sequences padded as the loop pads them, and each one by "
            "itself with no padding: are a real token's outputs the same both ways?",
            shows=("numbers", "tables"),
            observations=("first_output_shift", "output_shift", "loss_shift"),
            reading=padded_against_alone,
        ),
        Experiment(
            "padding-share",
            "Count the real tokens per batch",
            "Over the training batches, what share of the positions hold a real token?",
            shows=("numbers",),
            observations=("pad_to", "real_share"),
            reading=how_much_is_padding,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: both masks are right.", Change()),
        Fix(
            "mask-the-loss",
            "Set the padding positions' labels to -100, out of the loss's mean.",
            Change(replace={"loss_mask": {"all-positions": "real-tokens"}}),
        ),
        Fix(
            "mask-attention",
            "Mask the padding keys with -inf before the attention's softmax.",
            Change(replace={"attention_mask": {"missing": "applied"}}),
        ),
        Fix("pad-to-16", "Pad every batch to 16 positions only.", Change(set={"pad_to": 16})),
    ),
    # The loss curve is not shown: one batch's loss at the end strays by half between draws,
    # enough for a healthy run's last batch to stand out from a counted one's. What every cause
    # shares, and the stories speak of, is how much of each batch is padding.
    charts=(
        ShownChart(
            "Real tokens per batch", "share of the positions", {"real_share": "real tokens"}
        ),
    ),
    # How long the run is: the verdict of every cause holds at both ends. Every cause draws it
    # from one range: the chart's x-axis shows it, and 300 steps for two causes against
    # 150-200 for the others gave those two away.
    nuisance={"steps": (200, 250, 300)},
    symptom_observations=("pad_to",),
)

CASES = (
    Case(
        "a-loss-that-fell-with-padding",
        "A loss that fell with padding",
        "A per-token model over sequences of 4-16 tokens used to pad each batch to its longest "
        "sequence. Since the pipeline pads every sequence to 128 positions (so most of each "
        "batch is padding), the training loss it logs ends far lower than it used to. Is the "
        "model that much better now?",
        CASE_SET,
        causes=("padding-kept-out", "padding-counted"),
    ),
    Case(
        "scores-that-depend-on-the-batch",
        "Scores that depend on the batch",
        "A per-token model over sequences of 4-16 tokens, padded to 16 positions per batch. "
        "The team noticed that a batch's number moves with which sequences share it: batches "
        "of short sequences come out differently from batches of long ones.",
        CASE_SET,
        causes=("padding-counted-short", "padding-attended"),
    ),
)
