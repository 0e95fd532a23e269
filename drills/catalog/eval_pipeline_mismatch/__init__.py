"""Evaluation pipeline mismatch: the evaluation texts reach the model through a second code path
that encodes them differently from training.

A ticket router trains to near-zero loss; on the evaluation texts it scores about chance. Three
very different things look like that from the curves: the evaluation code builds its inputs
another way (a start token added twice, the separator left out of the template, the lower-casing
skipped), the model memorised a training set too small to learn from, or the evaluation texts
are unlike the training ones (products the tokenizer never knew). Decoding both encodings of the
same evaluation text shows the first at a glance; scoring those texts encoded the training way
is the measurement: if the mismatch is the cause, it recovers the healthy number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.eval_pipeline_mismatch.signature import PipelineSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)

PIPELINES = ("training", "double-start", "no-separator", "no-lowercase")
PRODUCTS = ("launch", "new")
TRAIN_PRODUCTS = ("launch", "launch-and-new")
TRAIN_SIZES = (16, 128, 1024, 2048)

# Thresholds diagnose() reads the numbers with.
# The model fits its training set: at least 95% right on it. Every setting that trains for the
# default 150 steps reaches 100% on seeds 0-4; at the smallest rate, 1e-4, or after one step it
# stays near chance.
TRAINED = 0.95
# Two accuracies "agree" within 0.15, and one is "far below" another past it. On seeds 0-4: a
# model that has seen every product scores 97-100% on held-out and evaluation tickets; a mismatch
# or new products leave the evaluation at 21-28% (chance is 25%; after 400 steps, 9-36%); 16
# training tickets leave the held-out ones at 27-31%, 128 at 68-74%. Between, 256 tickets give
# about 86-91%: this drill does not offer that size, as it sits near the line. After 30 steps
# (not at a knob's end) the model is at the line of TRAINED and reads healthy or inconclusive.
GAP = 0.15


class EvalPipelineMismatch(Drill):
    slug = "eval-pipeline-mismatch"
    position = 97
    title = "Evaluation pipeline mismatch"
    summary = (
        "Training fine, evaluation at chance: a second encoding path, a memorised training "
        "set, or texts unlike training? Decode both encodings and re-score."
    )
    symptom = (
        "The ticket router's training loss falls to almost zero and it gets every training "
        "ticket right. On the evaluation tickets it gets about one in four right: chance, with "
        "four teams."
    )
    scenario = (
        "A small model reads support tickets (a subject, then a body that names the product) "
        "and routes each to one of four teams; the team depends on the product. A word-level "
        "tokenizer turns text into ids; the training code lower-cases each ticket, joins the "
        "two fields around a separator token and encodes it. The evaluation code builds its "
        "inputs in its own function. Choose how that function encodes, which products the "
        "evaluation tickets name, the training set and the rate; predict the evaluation "
        "accuracy, then run it."
    )
    version = "1"
    healthy = "healthy"
    signature_type = PipelineSignature
    knobs = (
        Knob(
            "evaluation",
            "choice",
            "training",
            "How the evaluation code encodes a ticket: training (it calls the training "
            "pipeline); double-start (its template writes <bos> and the tokenizer adds "
            "another); no-separator (its template leaves <sep> out); no-lowercase (it skips "
            "the lower-casing the training code does).",
            choices=PIPELINES,
        ),
        Knob(
            "eval_products",
            "choice",
            "launch",
            "Which products the evaluation tickets name: launch (those of the training set) or "
            "new (added later: the tokenizer has never seen their names).",
            choices=PRODUCTS,
        ),
        Knob(
            "train_products",
            "choice",
            "launch",
            "Which products the tokenizer and the training tickets cover: launch, or "
            "launch-and-new (the tokenizer rebuilt and tickets of the new products labelled).",
            choices=TRAIN_PRODUCTS,
        ),
        Knob(
            "train_size",
            "int",
            1024,
            "Training tickets (128 launch products: 1,024 is about 8 tickets per product).",
            choices=TRAIN_SIZES,
        ),
        Knob("steps", "int", 150, "Full-batch AdamW steps.", minimum=1, maximum=400),
        Knob(
            "lr",
            "float",
            0.01,
            "AdamW learning rate (weight decay 1.0).",
            minimum=1e-4,
            maximum=0.1,
            log_scale=True,
        ),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "Nothing is wrong: both pipelines give every evaluation ticket the same ids, and "
            "the evaluation and fresh held-out tickets score within 0.15 of the training "
            "accuracy, which is 95% or more.",
        ),
        Hypothesis(
            "pipeline-mismatch",
            "The evaluation code encodes tickets differently from training (some get other "
            "token ids), and that is what costs the accuracy: the same tickets encoded the "
            "training way score within 0.15 of training, and at least 0.15 above what the "
            "evaluation reports.",
        ),
        Hypothesis(
            "overfitting",
            "The model fits its training tickets (95% or more) but fresh tickets drawn the same "
            "way and encoded the same way score more than 0.15 below that: it memorised its "
            "training set instead of learning which product goes to which team.",
        ),
        Hypothesis(
            "distribution-shift",
            "Both pipelines give the evaluation tickets the same ids and fresh tickets drawn "
            "like the training ones score within 0.15 of training; only the evaluation "
            "tickets score more than 0.15 below: they are unlike what the model learned from.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: either the model does not fit its training tickets (under 95%: "
            "too few steps or too small a rate to compare anything), or the pipelines "
            "disagree but that alone does not account for the evaluation (the same tickets "
            "encoded the training way score no better by 0.15, or still far below training).",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Cross-entropy: training tickets, and evaluation tickets as evaluation encodes them",
            ("train_loss", "eval_loss"),
            "nats",
            labels={"train_loss": "training", "eval_loss": "evaluation"},
        ),
        Chart(
            "accuracy",
            "Accuracy: evaluation tickets encoded each way, fresh held-out tickets, training",
            ("train_accuracy", "eval_accuracy", "reencoded_accuracy", "holdout_accuracy"),
            "share right",
            references=(Reference("chance", "chance_accuracy"),),
            labels={
                "train_accuracy": "training tickets",
                "eval_accuracy": "evaluation (its own encoding)",
                "reencoded_accuracy": "evaluation texts, encoded the training way",
                "holdout_accuracy": "fresh tickets drawn like training",
            },
        ),
    )
    observations = (
        Observation("train_examples", "Training tickets"),
        Observation("train_loss", "Final training loss (mean of the last 10% of steps)"),
        Observation("train_accuracy", "Accuracy on the training tickets"),
        Observation("eval_accuracy", "Evaluation accuracy, as the evaluation reports it"),
        Observation("eval_loss", "Evaluation loss, as the evaluation reports it"),
        Observation(
            "reencoded_accuracy",
            "The same evaluation tickets encoded the training way: accuracy",
            "train_accuracy",
        ),
        Observation(
            "holdout_accuracy",
            "Fresh tickets drawn like training, encoded the training way: accuracy",
            "train_accuracy",
        ),
        Observation("ids_differ_share", "Evaluation tickets whose token ids differ (share)"),
        Observation("length_change", "Tokens per ticket: evaluation encoding minus training's"),
        Observation("unknown_share", "Share of <unk> among the evaluation encoding's tokens"),
        Observation(
            "reencoded_unknown_share", "Share of <unk> when the training pipeline encodes them"
        ),
        Observation("chance_accuracy", "Chance accuracy (four teams)"),
    )
    numeric_predictions = (
        NumericPrediction(
            "length_change",
            "How many tokens longer will the evaluation code make each ticket than the "
            "training code does?",
            "tokens",
            "Write out the template each path fills and count the special tokens, including "
            "those the tokenizer adds itself. Fewer is a negative number.",
            reported_as="each evaluation encoding differed in length by",
            absolute_band=0,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        numbers = [
            signature.get(key)
            for key in (
                "train_accuracy",
                "eval_accuracy",
                "reencoded_accuracy",
                "holdout_accuracy",
                "ids_differ_share",
            )
        ]
        if any(value is None for value in numbers):
            return "inconclusive"
        train, reported, reencoded, holdout, differ = (float(v) for v in numbers if v is not None)
        if train < TRAINED:
            return "inconclusive"  # nothing learned: no number to compare the others with
        if differ > 0:
            # The mismatch is the cause only if encoding the same texts the training way
            # brings back what training promises.
            recovered = reencoded - reported >= GAP and train - reencoded <= GAP
            return "pipeline-mismatch" if recovered else "inconclusive"
        if train - holdout > GAP:
            return "overfitting"
        if train - reported > GAP:
            return "distribution-shift"
        return "healthy"


DRILL = EvalPipelineMismatch()
