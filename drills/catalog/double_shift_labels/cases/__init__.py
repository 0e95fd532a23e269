"""Cases on the double-shift-labels drill: a tiny causal language model whose loss settles on the
wrong number, because of how its labels point, what the loss counts, or what attention lets it
see. The text's entropy is known, so where the loss lands is the first clue; the decoded
input -> label pairs, a probe of what early predictions depend on and the loss split by token
type tell the causes apart. A draw picks the text too, and no story names it: on the four-sided
die's text sound labels settle at ln 4, where labels two ahead settle on the two-successor text,
so a learner must find out which text ran (its letters are shown with the input -> label pairs,
its entropy with the loss split and the longer run) before reading a floor. (The readings also
hold on the coin and die texts, where labels two rows ahead and a scored prompt cost no more
than sound labels: the pairs are read from the measured label offset, and the loss split names
the next-token floor first.)"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.double_shift_labels import TEXTS

LN2 = math.log(2)
NEAR_ZERO = 0.25  # a loss under a quarter of the next-token floor: the answer was readable
ON_FLOOR = 0.15  # within 15% of a floor counts as sitting on it
DILUTED = 0.15  # one loss 15% under the one it averages over: easy tokens dilute it


def what_the_pairs_show(signature: Mapping[str, Any], error: str | None) -> str:
    """What the decoded input -> label rows show at a glance.

    A learner reads from the rows whether a label is its own row's input, the next row's or the
    one after, and whether PAD or prompt rows are scored. The first and the last two are
    counted in the signature (share of labels equal to their input, PAD and prompt shares); the
    label offset the table shows outright is carried by the signature only in where the loss on
    the response settles, so it is read from that: nearer the two-step floor than the next-token
    floor means the labels point two rows ahead.
    """
    if (signature.get("labels_equal_inputs") or 0.0) >= 0.5:
        return "label-is-own-input"
    if signature.get("pad_share"):
        return "padding-rows-scored"
    if signature.get("prompt_share"):
        return "prompt-rows-scored"
    offset = signature.get("label_offset")
    if offset is not None:  # measured since version 4: the rows' offset, read directly
        return "label-two-rows-ahead" if offset == 2 else "label-is-next-row"
    response = signature.get("response_loss")
    next_floor = signature.get("next_token_entropy") or LN2
    two_step = signature.get("two_step_entropy") or 2 * LN2
    if response is not None and response > (next_floor + two_step) / 2:
        return "label-two-rows-ahead"
    return "label-is-next-row"


def future_probe(signature: Mapping[str, Any], error: str | None) -> str:
    """Do the early predictions move when the later tokens are changed?"""
    influence = signature.get("future_influence")
    if influence is None:
        return "no-probe"
    return "early-predictions-move" if influence > 0.01 else "early-predictions-fixed"


def loss_by_token(signature: Mapping[str, Any], error: str | None) -> str:
    """The loss as trained, on the real tokens and on the response, read against the floors."""
    final = signature.get("final_loss")
    real = signature.get("real_token_loss")
    response = signature.get("response_loss")
    next_floor = signature.get("next_token_entropy") or LN2
    two_step = signature.get("two_step_entropy") or 2 * LN2
    if final is None or real is None or response is None:
        return "no-loss"
    if response < NEAR_ZERO * next_floor:
        return "response-near-zero"
    if final < (1 - DILUTED) * real:
        return "total-below-real-tokens"
    if real < (1 - DILUTED) * response:
        return "real-tokens-below-response"
    # The next-token floor first: on the coin-flip text the two floors are one number, and
    # the loss split cannot say which one the response sits on.
    if abs(response - next_floor) <= ON_FLOOR * next_floor:
        return "response-at-next-token-floor"
    if abs(response - two_step) <= ON_FLOOR * two_step:
        return "response-at-two-step-floor"
    return "response-off-every-floor"


def where_the_curve_settles(signature: Mapping[str, Any], error: str | None) -> str:
    """Where the training loss (the only curve) ends, against the text's next-token entropy,
    shown beside it."""
    final = signature.get("final_loss")
    floor = signature.get("next_token_entropy") or LN2
    if final is None:
        return "no-loss"
    if final < NEAR_ZERO * floor:
        return "falls-to-zero"
    if final > (1 + ON_FLOOR) * floor:
        return "settles-above-the-floor"
    if final < (1 - ON_FLOOR) * floor:
        return "settles-below-the-floor"
    return "settles-at-the-floor"


CASE_SET = CaseSet(
    drill="double-shift-labels",
    causes=(
        Cause(
            "labels-sound",
            "healthy",
            "Nothing is wrong: each label is the next token, only response letters count, and "
            "the loss sits on the text's entropy.",
            {"labels": "shift-once", "attention": "causal"},
            "shifted-once",
            fix="change-nothing",
        ),
        Cause(
            "labels-two-ahead",
            "data",
            "The labels were shifted before they reached the loss, which shifts them again: "
            "each position is scored on the token two places ahead.",
            {"labels": "shift-twice"},
            "two-step",
            fix="drop-the-extra-shift",
        ),
        Cause(
            "labels-unshifted",
            "data",
            "Nobody shifts the labels: each position is scored on the very token it reads.",
            {"labels": "no-shift"},
            "copies-input",
            fix="shift-in-the-loss",
        ),
        Cause(
            "attention-sees-ahead",
            "forward",
            "Attention has no causal mask: each position can look at the later tokens, the one "
            "it must predict among them.",
            {"attention": "unmasked"},
            "sees-future",
            fix="restore-causal-mask",
        ),
        Cause(
            "padding-averaged-in",
            "evaluation",
            "The padding positions are left in the loss: the number reported averages trivially "
            "predictable PAD tokens with the real ones, while the real tokens do no better.",
            {"labels": "pad-in-loss"},
            "pad-counted",
            fix="ignore-padding",
        ),
        Cause(
            "prompt-scored",
            "loss",
            "The prompt positions are not masked out of the loss: the model is trained and "
            "scored on the prompt letters too. A predictable prompt pulls the mean down; one "
            "drawn like the response hides in it, and only the labels show it is scored.",
            {"labels": "prompt-in-loss"},
            "prompt-counted",
            fix="ignore-prompt",
        ),
    ),
    experiments=(
        Experiment(
            "input-label-pairs",
            "Decode input and label pairs",
            "Print, position by position, the token the model reads and the label it is scored "
            "against, around the start and the end of the response.",
            shows=("tables", "inputs"),
            observations=("targets_counted",),
            reading=what_the_pairs_show,
        ),
        Experiment(
            "change-the-future",
            "Change later tokens, watch early predictions",
            "Alter every token after the middle of the response and measure how far the "
            "trained model's predictions before that point move.",
            shows=("numbers",),
            observations=("future_influence",),
            reading=future_probe,
        ),
        Experiment(
            "loss-by-token-type",
            "Split the loss by token type",
            "Average the per-token loss three ways: over everything the loss counts, over the "
            "non-padding tokens, and over the response letters only; compare each with the "
            "text's entropy.",
            shows=("numbers",),
            observations=(
                "final_loss",
                "real_token_loss",
                "response_loss",
                "next_token_entropy",
                "two_step_entropy",
            ),
            reading=loss_by_token,
        ),
        Experiment(
            "train-four-times-longer",
            "Train four times longer",
            "Run 600 steps instead of the usual few hundred: does the loss settle somewhere else?",
            change=Change(set={"steps": 600}),
            shows=("numbers",),
            observations=("final_loss", "second_half_drop", "next_token_entropy"),
            reading=where_the_curve_settles,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the labels and the loss are sound.", Change()),
        Fix(
            "drop-the-extra-shift",
            "Pass the input ids as labels unshifted and let the loss do the one shift.",
            Change(replace={"labels": {"shift-twice": "shift-once"}}),
        ),
        Fix(
            "shift-in-the-loss",
            "Shift the labels by one (logits[:, :-1] against labels[:, 1:]) before the loss.",
            Change(replace={"labels": {"no-shift": "shift-once"}}),
        ),
        Fix(
            "restore-causal-mask",
            "Apply the causal mask in attention so that no position sees the tokens after it.",
            Change(replace={"attention": {"unmasked": "causal"}}),
        ),
        Fix(
            "ignore-padding",
            "Set the labels of padding positions to the ignore index.",
            Change(replace={"labels": {"pad-in-loss": "shift-once"}}),
        ),
        Fix(
            "ignore-prompt",
            "Set the labels of prompt positions to the ignore index.",
            Change(replace={"labels": {"prompt-in-loss": "shift-once"}}),
        ),
        Fix(
            "train-longer",
            "Train for 600 steps: the loss has not finished falling.",
            Change(set={"steps": 600}),
        ),
        Fix(
            "lower-learning-rate",
            "Halve the learning rate: the optimizer overshoots the minimum.",
            Change(),  # the drill's learning rate is fixed: a plausible change that alters nothing
        ),
    ),
    charts=(ShownChart("Training loss", "nats", {"loss": "training loss"}),),
    nuisance={"steps": (200, 250, 300), "text": TEXTS},
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "a-borrowed-data-loader",
        "A data loader written by someone else",
        "You train a small transformer on synthetic text from a generator whose randomness is "
        "known letter by letter, so an honest model's loss has a floor you can work out. The data"
        " loader comes from another team: look at the run before you build on it.",
        CASE_SET,
        causes=("labels-two-ahead", "labels-sound", "prompt-scored", "padding-averaged-in"),
    ),
    Case(
        "better-than-the-entropy",
        "A loss below what the text allows",
        "After rewriting parts of a small transformer's pipeline for speed, you retrain it on "
        "synthetic text whose answer letters are each a fair draw among a few. The loss drops to "
        "almost zero, which no honest model can reach on a text with that much chance in it.",
        CASE_SET,
        causes=("attention-sees-ahead", "labels-unshifted"),
    ),
    Case(
        "a-new-collator",
        "A new batch collator",
        "You moved the training of a small transformer, on synthetic text whose answer letters "
        "are each a fair draw among a few, to a new batch collator. A teammate wants to report "
        "the new run's numbers: check them first.",
        CASE_SET,
        causes=("padding-averaged-in", "prompt-scored", "labels-sound"),
    ),
)
