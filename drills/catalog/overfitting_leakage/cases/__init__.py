"""Cases on the overfitting-leakage drill: a wide MLP on noisy labels, judged by a validation
curve that may warn of memorising, may have been copied into training and stopped warning, or
may be telling the plain truth. A clean held-out set and a search for shared examples tell them
apart; a model that memorises may have too few rows, or many rows that repeat a few examples,
and counting the different examples tells those apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.cases.readings import distinct_rows
from drills.cases.shared_experiments import SEARCH_SHARED_EXAMPLES

# A clean held-out loss this far above the training loss is memorising, not the modest gap of a
# model that generalises (about 0.2 nats here, against 1.5 or more for a few hundred examples).
LARGE_GAP = 0.6
# Validation nearer the training loss than halfway to the clean held-out loss sits with the
# training data. With plenty of data the gaps are too small to read it on every seed (an honest
# split can sit 0.47 of the way up, a copied one 0.43): the experiment first shrinks the fresh
# training data so that memorising opens a wide gap (then a copied validation set sits at most
# 0.02 of the way up, an honest one 0.87 or more). With the clean loss within this many nats of
# the training loss (a model that did not fit: 0.04 at most) there is no gap to place it in.
HALFWAY = 0.5
NO_GAP = 0.15
# The training loss above this share of the loss of guessing: the model did not fit at all.
NEAR_CHANCE = 0.85


def clean_gap(signature: Mapping[str, Any], error: str | None) -> str:
    """How far data nobody touched sits above the training loss."""
    gap = signature.get("clean_gap")
    if gap is None:
        return "no-numbers"
    return "far-above-training" if gap > LARGE_GAP else "close-to-training"


def validation_between(signature: Mapping[str, Any], error: str | None) -> str:
    """Where validation sits between the training loss and the clean held-out loss."""
    val_gap, clean = signature.get("final_gap"), signature.get("clean_gap")
    if val_gap is None or clean is None:
        return "no-numbers"
    if clean < NO_GAP:
        return "all-level"
    return "nearer-training" if val_gap < HALFWAY * clean else "nearer-held-out"


def training_fit(signature: Mapping[str, Any], error: str | None) -> str:
    train, chance = signature.get("final_train_loss"), signature.get("chance_loss")
    if train is None or chance is None:
        return "no-numbers"
    return "near-guessing" if train > NEAR_CHANCE * chance else "fits-training"


CASE_SET = CaseSet(
    drill="overfitting-leakage",
    causes=(
        Cause(
            "nothing-wrong",
            "healthy",
            "Nothing is wrong: with this much data the small gap between training and "
            "validation is what an honest split looks like.",
            {"train_size": 2048, "leak": 0.0},
            "generalises",
            fix="change-nothing",
        ),
        Cause(
            "too-few-examples",
            "data",
            "There are too few training examples for a model this large: it memorises them, "
            "noisy labels included.",
            {"train_size": 128},
            "overfits",
            fix="collect-more-data",
        ),
        Cause(
            "rows-repeated",
            "data",
            "The training rows repeat a few examples over and over, as a join that multiplies "
            "rows leaves a file: however many rows there are, the model memorises those few "
            "examples, noisy labels included.",
            # The very 128 examples too-few-examples draws, each in 16 rows: the two runs see
            # every example as often and differ only in the order of the batches, so nothing
            # on the curves tells them apart; counting the different examples does.
            {"train_size": 2048, "distinct": 128},
            "overfits",
            fix="rebuild-training-rows",
        ),
        Cause(
            "validation-copied-into-training",
            "evaluation",
            "Validation examples also sit in the training set, so validation scores the model "
            "on data it has learned.",
            # An eighth of validation (64 examples), as a merge of overlapping exports leaves
            # it. The whole set copied ended with validation on top of training or below it on
            # every draw, where an honest split ends with validation visibly above, so the first
            # screen gave it away (0.8 of draws). A quarter read "inconclusive" on 39 of 40
            # random draws and "leakage" on one, while the cause claimed "leakage": a round
            # scores against what the run reads, so it marked the right answer wrong. An eighth
            # can only expect an eighth of the clean gap (0.06-0.19 nats here) against a
            # standard error of 0.03-0.05: the losses never show it, the drill
            # reads "inconclusive" (copies found, curves silent) on every draw, and the search
            # for shared examples is what finds it. Attempts drawn before keep their leak
            # (their knobs are stored).
            {"leak": 0.125},
            "inconclusive",
            fix="deduplicate-split",
            exercise="overfitting-honest-early-stop",
        ),
        # No case draws it any more (a-wide-mlp-on-noisy-labels retired it: its flat curves
        # near ln 4 gave it away on every draw); kept for the attempts stored with it.
        Cause(
            "crushing-weight-decay",
            "optimizer",
            "The weight decay is so strong that every step pulls the weights back to zero.",
            {"weight_decay": 50.0},
            "underfit",
            fix="weaker-weight-decay",
        ),
    ),
    experiments=(
        SEARCH_SHARED_EXAMPLES,
        Experiment(
            "clean-held-out-set",
            "Score data nothing was copied from",
            "Score the model on a fresh held-out set collected separately, and compare it with "
            "the training loss.",
            shows=("numbers",),
            observations=("final_train_loss", "final_clean_loss", "clean_gap"),
            reading=clean_gap,
        ),
        Experiment(
            "memorise-a-small-sample",
            "Retrain on a small sample and place validation",
            "Retrain on only 128 fresh examples (plus whatever the training set holds besides), "
            "long enough to memorise them, then score training, validation and a fresh "
            "held-out set: is validation nearer the training loss or the fresh data's?",
            change=Change(replace={"train_size": {2048: 128}}),
            shows=("numbers",),
            observations=("final_train_loss", "final_val_loss", "final_clean_loss"),
            reading=validation_between,
        ),
        Experiment(
            "count-distinct-examples",
            "Count the different training examples",
            "Count the training rows, and how many different examples they hold once exact "
            "repeats count once.",
            shows=("numbers",),
            observations=("train_examples", "distinct_examples"),
            reading=distinct_rows,
        ),
        Experiment(
            "training-fit",
            "How well it fits its own training data",
            "Compare the final training loss with the loss of guessing uniformly.",
            shows=("numbers",),
            observations=("final_train_loss", "chance_loss"),
            reading=training_fit,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the training is sound.", Change()),
        Fix(
            "collect-more-data",
            "Train on the full 2,048 examples instead of a small sample.",
            Change(replace={"train_size": {128: 2048}}),
        ),
        Fix(
            "rebuild-training-rows",
            "Rebuild the training file from its source so that every row is a different example.",
            Change(set={"distinct": 0}),
        ),
        Fix(
            "deduplicate-split",
            "Remove from the training set every example that also appears in validation.",
            Change(replace={"leak": {0.125: 0.0, 0.25: 0.0, 1.0: 0.0}}),
        ),
        Fix(
            "weaker-weight-decay",
            "Bring the weight decay down to a usual value (0.01).",
            Change(set={"weight_decay": 0.01}),
        ),
        Fix(
            "add-dropout",
            "Add dropout of 0.3 after each hidden layer.",
            Change(set={"dropout": 0.3}),
        ),
        Fix(
            "halve-learning-rate",
            "Halve the learning rate.",
            Change(),  # the drill keeps its rate fixed: a plausible change that alters nothing
        ),
    ),
    charts=(
        ShownChart(
            "Loss every 10 steps",
            "cross-entropy (nats)",
            {"train": "training", "val": "validation"},
        ),
    ),
    base={"train_size": 2048, "leak": 0.0, "weight_decay": 0.0, "distinct": 0},
    # Dropout up to 0.2 and AdamW weight decay up to 2 (each step shrinks the weights by 0.3%)
    # narrow the honest gap and the copied set's lead a little: the two splits' curves meet on
    # more draws, and a small set is still memorised.
    nuisance={"dropout": (0.0, 0.1, 0.2), "weight_decay": (0.0, 0.5, 1.0, 2.0)},
    symptom_observations=("final_train_loss", "min_val_loss", "final_val_loss"),
)

CASES = (
    Case(
        "merged-exports",
        "Training and validation from merged exports",
        "You merged several exports into training and validation files for a 4-class classifier "
        "and trained a wide MLP for 400 steps. Before it goes out, your lead asks whether its "
        "validation numbers can be trusted.",
        CASE_SET,
        causes=("validation-copied-into-training", "nothing-wrong"),
    ),
    Case(
        "a-wide-mlp-on-noisy-labels",
        "A wide MLP on noisy labels",
        "A wide MLP on a 4-class problem with noisy labels, trained for 400 steps. Read its "
        "training and validation curves and say whether it is ready.",
        CASE_SET,
        # A memorising run has a look-alike (too few rows, or rows that repeat a few examples)
        # as an honest one has (nothing wrong, or validation copied in unseen).
        causes=(
            "too-few-examples",
            "rows-repeated",
            "nothing-wrong",
            "validation-copied-into-training",
        ),
        retired=("crushing-weight-decay",),
    ),
    Case(
        "two-flat-curves",
        "Two flat curves",
        "After 400 steps of training a wide MLP on a 4-class problem, both curves have flattened. "
        "Your lead wants to know whether the model overfits or the split is wrong before it goes "
        "out.",
        CASE_SET,
        causes=("nothing-wrong", "validation-copied-into-training"),
    ),
)
