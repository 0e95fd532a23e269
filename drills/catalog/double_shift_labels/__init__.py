"""Double-shifted labels: where a causal LM's loss settles tells you how its labels were built.

The text comes from a source whose floors are known: ln 2 for the next token, the higher
two-step entropy for the token after it, ~0 for a token the model can already see. Each way of
building labels lands the loss on one of these floors, or hides it behind tokens that are easy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.double_shift_labels.signature import DoubleShiftSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)

# The values of the `labels` knob; drills/kit/causal_lm.py LABEL_MODES builds the labels for each.
LABELS = ("shift-once", "shift-twice", "no-shift", "pad-in-loss", "all-masked", "prompt-in-loss")
# The values of the `attention` knob: the causal mask on, or left off (the model bug).
ATTENTION = ("causal", "unmasked")
# The values of the `text` knob: the two-successor chain after a counting prompt
# (drills/kit/causal_lm.py), or a text where every letter is a fair draw (drills/kit/coin_text.py)
# among two letters (a coin) or four (a four-sided die).
TEXTS = ("two-successors", "coin-every-letter", "dice-every-letter")

# Thresholds diagnose() reads the numbers with.
FLOOR_BAND = 0.15  # within ±15% of an entropy floor counts as sitting on it
COPY_BELOW = 0.25  # response loss under a quarter of ln 2: the answer was visible to the model
HIDDEN_GAP = 0.15  # a loss 15% under the one it averages over: easy tokens are diluting it
COPIED_LABELS = 0.5  # half the labels are the token read at their own position: not shifted
SEES_FUTURE = 0.01  # early predictions moved by a hundredth of a nat when later tokens changed
STILL_FALLING = 0.2  # the loss fell by a fifth after mid-run: it is still on its way down
# "About zero" for a predicted loss: the copying variants end at 0.001-0.044 nats over seeds
# 0-4, well inside it, and it is under COPY_BELOW * ln 2 (0.17), where diagnose() calls copying.
ABOUT_ZERO = 0.1


# The hypotheses whose loss is read against the next-token entropy: every one but the double
# shift (whose honest floor is the two-step entropy) and the two that let the model read its
# answer (whose floor is 0).
HONEST_FLOOR_FOR = ("shifted-once", "pad-counted", "prompt-counted", "not-converged")
READS_ITS_ANSWER = ("copies-input", "sees-future")


def read_against_the_floor(key: str, label: str) -> tuple[Observation, ...]:
    """A loss shown beside the floor that fits the run: the next-token entropy, the two-step
    entropy when the labels were shifted twice, 0 when the model can see the label."""
    return (
        Observation(key, label, "next_token_entropy", reference_for=HONEST_FLOOR_FOR),
        Observation(key, label, "two_step_entropy", reference_for=("two-step",)),
        Observation(key, label, "seen_token_entropy", reference_for=READS_ITS_ANSWER),
    )


class DoubleShiftLabels(Drill):
    slug = "double-shift-labels"
    position = 30
    title = "Double-shifted labels"
    summary = "A causal LM's loss floor reveals how far ahead its labels point, and what counts."
    symptom = (
        "Your tiny language model's loss settles at a number, but is it the right number? "
        "The text has a known entropy, and the loss does not always land on it."
    )
    scenario = (
        "A small causal transformer learns synthetic text: a 12-letter prompt that counts "
        "through a-h (and whose first letter sets the answer's length), then a response of "
        "10-17 letters from A-P where each letter has exactly two equally likely successors, "
        "then padding. Predicting the next response letter cannot beat ln 2 ≈ 0.69 nats. "
        "Choose how the labels are built and whether attention is causal, predict where the "
        "loss, the loss on real tokens and the loss on the response settle, then run it. "
        "Forgetting the shift and leaving the causal mask off both let the model read its "
        "answer, so their losses look alike: the decoded input → label pairs (is a row's label "
        "its own input, or the next row's?) and the future-influence probe (do early "
        "predictions move when later tokens change?) tell them apart."
    )
    # 4: the text became a knob (coin-every-letter), label_offset measured; 5: dice-every-letter
    version = "5"
    healthy = "shifted-once"
    signature_type = DoubleShiftSignature
    knobs = (
        Knob(
            "labels",
            "choice",
            "shift-once",
            "How the labels are built: shift-once (labels = inputs, the loss shifts them by one; "
            "prompt and PAD masked); shift-twice (the labels were already shifted and the loss "
            "shifts them again); no-shift (the loss forgets to shift); pad-in-loss (PAD labels "
            "not masked); all-masked (every label set to the ignore index); prompt-in-loss "
            "(prompt labels not masked).",
            choices=LABELS,
        ),
        Knob(
            "attention",
            "choice",
            "causal",
            "causal: each position attends to itself and the positions before it. unmasked: the "
            "causal mask is left off, so each position also attends to the tokens after it, "
            "the one its label names among them. The loss alone looks like no-shift's; the "
            "input → label pairs and the future-influence probe do not.",
            choices=ATTENTION,
        ),
        Knob(
            "text",
            "choice",
            "two-successors",
            "two-successors: the counting prompt, then response letters that each have two "
            "equally likely successors (two steps ahead is harder: ln 4). coin-every-letter: "
            "each position has its own two letters and a fair coin picks one, in the prompt as "
            "in the response (whether the prompt's first letter is a or b sets a length of 10 "
            "or 11), so every letter costs ln 2, two steps ahead no more than one. "
            "dice-every-letter: the same with four letters to a position and a fair four-sided "
            "die, so every letter costs ln 4 ≈ 1.39, where two-successors puts labels two "
            "steps ahead.",
            choices=TEXTS,
        ),
        Knob(
            "steps",
            "int",
            150,
            "Optimizer steps, each on a fresh batch of 8 sequences. Too few and no curve has "
            "reached its floor yet.",
            minimum=10,
            maximum=600,
        ),
    )
    hypotheses = (
        Hypothesis(
            "shifted-once",
            "Each label is the token right after its position: the loss settles at the "
            "next-token entropy (ln 2 on the two-successor and coin texts, ln 4 on the die).",
        ),
        Hypothesis(
            "two-step",
            "Each label is two tokens ahead: the model has to guess past a token it has not seen, "
            "and the loss settles at the higher two-step entropy.",
        ),
        Hypothesis(
            "copies-input",
            "Each label is the token at its own position, which the model can see: it learns to "
            "copy, and the loss falls to about zero.",
        ),
        Hypothesis(
            "sees-future",
            "The causal mask is off: each position can attend to the tokens after it, the very "
            "token it must predict among them (wherever the labels point), reads it off, and the "
            "loss falls to about zero.",
        ),
        Hypothesis(
            "pad-counted",
            "Padding counts as a target: padding is trivial to predict, so the reported loss ends "
            "below the next-token entropy, while the loss on the real tokens stays on it.",
        ),
        Hypothesis(
            "prompt-counted",
            "Prompt tokens count as targets. The counting prompt is easy to predict and pulls "
            "the total loss well below the next-token entropy, while the loss on the response "
            "stays on it; on a text whose prompt is drawn like its response, only the labels "
            "show that the prompt is scored.",
        ),
        Hypothesis(
            "no-targets",
            "No label survives the mask: the mean loss is zero divided by zero and there is "
            "nothing to train on.",
        ),
        Hypothesis(
            "not-converged",
            "The run is too short: the loss is still on its way down and sits on no floor yet.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Loss: as trained, on real tokens, on the response",
            ("loss", "real_token_loss", "response_loss"),
            "nats",
            # The floors the curves are read against, drawn as flat lines.
            references=(
                Reference("next-token entropy", "next_token_entropy"),
                Reference("two-step entropy", "two_step_entropy"),
            ),
            labels={
                "loss": "loss as trained",
                "real_token_loss": "loss on real tokens",
                "response_loss": "loss on the response",
            },
        ),
    )
    observations = (
        *read_against_the_floor("final_loss", "Loss as trained (mean of the last 10% of steps)"),
        *read_against_the_floor("real_token_loss", "Loss on real tokens (PAD labels left out)"),
        *read_against_the_floor("response_loss", "Loss on response letters only"),
        Observation(
            "second_half_drop", "How much the loss still fell after mid-run (share of its value)"
        ),
        Observation("two_step_entropy", "Two-step entropy: the floor two tokens ahead"),
        Observation("initial_loss", "Loss at the first step", "chance_loss"),
        Observation("targets_counted", "Labels that count in the first batch's loss"),
        Observation("prompt_share", "Share of the counted real tokens that are prompt letters"),
        Observation("pad_share", "Share of the counted labels that are PAD"),
        Observation(
            "labels_equal_inputs",
            "Share of the counted labels that are the input at their own position",
        ),
        Observation(
            "future_influence",
            "Future-influence probe: how far (nats) the trained model's predictions up to "
            "mid-response move when every later token is changed (0 for a causal model)",
        ),
    )

    # Over seeds 0-4 the loss as trained settles at 0.715-0.730 when shifted once (ln 2 = 0.693),
    # 1.328-1.408 when shifted twice (ln 4 = 1.386; this seed's two-step entropy 1.321-1.386),
    # and under 0.05 when the model can read its answer (tests/drills/test_numeric_predictions.py).
    numeric_predictions = (
        NumericPrediction(
            "final_loss",
            "Where will the loss as trained settle (mean of the last 10% of steps)?",
            "nats",
            "Count how many letters the label could be, given the text and what the model sees, "
            "and which tokens count in the mean.",
            reported_as="the loss as trained settled at",
            relative_band=FLOOR_BAND,
            absolute_band=ABOUT_ZERO,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("targets_counted") == 0:
            return "no-targets"
        final = signature.get("final_loss")
        response = signature.get("response_loss")
        real = signature.get("real_token_loss")
        next_floor = signature.get("next_token_entropy")
        two_step_floor = signature.get("two_step_entropy")
        if final is None or response is None or real is None or not next_floor:
            return "not-converged"
        if response < COPY_BELOW * next_floor:
            # The model reads its answer; where from? The labels say whether it is the input at
            # the same position, the probe whether later positions are visible at all.
            copied = signature.get("labels_equal_inputs")
            if copied is not None and copied >= COPIED_LABELS:
                return "copies-input"
            influence = signature.get("future_influence")
            if influence is not None and influence > SEES_FUTURE:
                return "sees-future"
            return "copies-input"
        drop = signature.get("second_half_drop")
        if drop is not None and drop > STILL_FALLING:
            return "not-converged"  # passing through a floor's value is not settling on it
        # Where the labels point, read off the batch: on a text where every letter is a coin
        # flip the two-step floor is the next-token floor, and the loss cannot tell them apart.
        offset = signature.get("label_offset")
        if offset == 2 and two_step_floor:
            if abs(response - two_step_floor) <= FLOOR_BAND * two_step_floor:
                return "two-step"
        if abs(response - next_floor) <= FLOOR_BAND * next_floor:
            if final < (1 - HIDDEN_GAP) * real:
                return "pad-counted"  # only PAD separates "all counted" from "real tokens"
            # Real, but not response: the prompt. When every prompt letter is a coin flip it
            # costs as much as the response, so a run that measured its labels (offset known)
            # is read by the prompt's share of them.
            measured = offset is not None and (signature.get("prompt_share") or 0) > 0
            if real < (1 - HIDDEN_GAP) * response or measured:
                return "prompt-counted"
            return "shifted-once"
        if two_step_floor and abs(response - two_step_floor) <= FLOOR_BAND * two_step_floor:
            return "two-step"
        return "not-converged"


DRILL = DoubleShiftLabels()
