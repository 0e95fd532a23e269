"""Padding masks: the attention mask against the loss mask, two masks that guard two things.

Sequences of different lengths are padded to one length to make a batch. Two masks then keep
the padding out of the numbers. The attention mask keeps padding keys out of every softmax, so a
real token's output does not depend on how much padding its batch carries; without it, padding
is attended to, and the same sequence gives other outputs in another batch. The loss mask keeps
padding positions out of the average; without it, padding is counted, and since padding is easy
to predict the logged loss is mostly the padding's: it falls as padding grows, while the real
tokens' loss does not. One mask cannot stand in for the other, and each leaves its own trace:
which positions the loss has a gradient for, and whether outputs move when only padding changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.padding_masks.signature import PaddingSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, NumericPrediction, Observation

ATTENTION_MASKS = ("applied", "missing")
LOSS_MASKS = ("real-tokens", "all-positions")
PAD_TO = (16, 32, 64, 128)

# Thresholds diagnose() reads the numbers with.
# A real token's logits, padded against the same sequence alone, with the weights the run starts
# from: with the attention mask they agree to float rounding (at most 3.6e-7 on seeds 0-4 at
# pad_to 16, 32 and 128); without it they differ by 0.18 to 0.96. Read there, before training,
# the number says what the code does: a model trained without the mask may learn to give padding
# little weight (down to 3e-5 of a logit at pad_to = 128 with padding counted), which is not a mask.
SAME_OUTPUT = 1e-5
MOVED_OUTPUT = 1e-3
# After training, with the mask: at most 4.8e-6 (logits grow as the model trains); the healthy
# reading asks for this too, so that "the same padded as alone" holds of the trained model.
SAME_TRAINED_OUTPUT = 1e-4
# Hypotheses under which the loss counts padding: the real share is the logged loss's reference.
COUNTED = ("pad-counted", "pad-attended-and-counted")


class PaddingMasks(Drill):
    slug = "padding-masks"
    position = 35
    title = "Padding masks"
    summary = (
        "Pad sequences to one length, and check both masks: is padding attended to, "
        "and is it counted in the loss?"
    )
    symptom = (
        "A per-token model trained on padded batches reports a loss that depends on how much "
        "padding the batches carry, and the same sequence does not always get the same answer."
    )
    scenario = (
        "Sequences of 4-16 tokens (10 token ids, each with a fixed value) are padded to one "
        "length and fed to a model with a single attention layer. Each token is labelled by "
        "whether its value lies above the mean of its own sequence, which the model can only "
        "answer by attending over the sequence. Choose whether padding is masked out of the "
        "attention, whether the loss counts padding positions, and how far batches are padded; "
        "predict what the logged loss shows and whether the trained model's answers for a "
        "sequence change with its padding, then run it."
    )
    version = "1"
    healthy = "healthy"
    signature_type = PaddingSignature
    knobs = (
        Knob(
            "attention_mask",
            "choice",
            "applied",
            "applied: padding keys get a score of -inf before the softmax, so no real token "
            "attends to padding; missing: every position attends to every other, padding "
            "included.",
            choices=ATTENTION_MASKS,
        ),
        Knob(
            "loss_mask",
            "choice",
            "real-tokens",
            "real-tokens: padding labels are set to -100 and left out of the cross-entropy's "
            "mean; all-positions: every position of the padded batch is averaged, padding "
            "(whose label is PAD) included.",
            choices=LOSS_MASKS,
        ),
        Knob(
            "pad_to",
            "int",
            32,
            "Positions per sequence in a batch: each sequence of 4-16 tokens is padded to this.",
            choices=PAD_TO,
        ),
        Knob("steps", "int", 150, "Adam steps, batches of 32 sequences.", minimum=1, maximum=300),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "Both masks are right: the loss has a gradient only at real tokens, so the logged "
            "loss is the real tokens' loss; and padding is kept out of attention, so each real "
            "token's output is the same padded as alone, before training and after it.",
        ),
        Hypothesis(
            "pad-counted",
            "Padding is counted in the loss: the loss has a gradient at padding positions, so "
            "each step's logged loss is the real tokens' share of the positions times their "
            "loss plus the padding's share times the padding's loss. Attention is masked: each "
            "real token's output is the same padded as alone.",
        ),
        Hypothesis(
            "pad-attended",
            "Padding is attended to: with the weights the run started from, a real token's "
            "output differs between its padded batch and the same sequence alone, so what the "
            "model computes depends on how much padding a sequence is given (training may "
            "learn to give padding less weight; the code does not keep it out). The loss mask "
            "is right: the loss has a gradient only at real tokens.",
        ),
        Hypothesis(
            "pad-attended-and-counted",
            "Both masks are missing: padding is attended to (with the weights the run started "
            "from, a real token's output differs padded and alone) and counted in the loss "
            "(the loss has a gradient at padding positions).",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: a real token's output padded and alone differs by more than "
            "rounding but too little to call it attention to padding, or no step was measured.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "The logged loss against the real tokens' loss, on the same batches",
            ("loss", "real_token_loss", "padding_loss"),
            "cross-entropy (nats)",
            log_y=True,
            labels={
                "loss": "logged loss",
                "real_token_loss": "real tokens only",
                "padding_loss": "padding positions only",
            },
        ),
        Chart(
            "real_share",
            "Share of each batch's positions holding a real token",
            ("real_share",),
            "real tokens / positions",
            labels={"real_share": "real share"},
        ),
    )
    observations = (
        Observation("pad_to", "Positions per padded sequence"),
        Observation("real_share", "Share of the training positions that hold a real token"),
        Observation("counted_positions", "First step: positions the loss has a gradient for"),
        Observation("counted_padding", "First step: of them, padding positions"),
        Observation("counted_padding_share", "Share of the counted positions that are padding"),
        Observation("logged_loss", "Logged loss (mean of the last 10% of steps)"),
        Observation("real_token_loss", "Real tokens' loss, same batches (last 10% of steps)"),
        Observation("padding_loss", "Padding positions' loss, same batches (last 10% of steps)"),
        Observation(
            "logged_over_real",
            "Logged loss / real tokens' loss",
            "real_share",
            reference_for=COUNTED,
        ),
        Observation(
            "first_output_shift",
            "Held out, untrained: largest |logit padded - logit alone| of a real token",
        ),
        Observation(
            "output_shift",
            "Held out, trained: largest |logit padded - logit alone| of a real token",
        ),
        Observation("held_out_loss_padded", "Held out: real tokens' loss, padded"),
        Observation("held_out_loss_unpadded", "Held out: real tokens' loss, each sequence alone"),
        Observation("loss_shift", "Held out: loss padded - loss alone"),
        Observation("held_out_accuracy", "Held out: real tokens labelled right, alone"),
    )
    numeric_predictions = (
        NumericPrediction(
            "logged_over_real",
            "How many times the real tokens' loss will the logged loss be, at the end?",
            "times the real tokens' loss",
            "Sequences hold 4-16 real tokens, 10 on average; PAD is easy to predict once "
            "learned. Count which positions the mean runs over, with and without the loss mask.",
            reported_as="the logged loss ended at",
            absolute_band=0.05,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        first, trained = signature.get("first_output_shift"), signature.get("output_shift")
        counted = signature.get("counted_padding")
        if first is None or trained is None or counted is None:
            return "inconclusive"  # no step, or no held-out measurement
        if first <= SAME_OUTPUT and trained <= SAME_TRAINED_OUTPUT:
            return "pad-counted" if counted > 0 else "healthy"
        if first >= MOVED_OUTPUT:
            return "pad-attended-and-counted" if counted > 0 else "pad-attended"
        return "inconclusive"


DRILL = PaddingMasks()
