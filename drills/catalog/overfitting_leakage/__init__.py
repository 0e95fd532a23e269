"""Overfitting and leakage: a large model on a small, noisy training set.

The training loss keeps falling while the validation loss reaches a minimum and climbs again:
the checkpoint to keep is the one at that minimum. Copy validation examples into the training
set and the validation loss stops warning you, while a held-out set nothing was copied from
still shows how badly the model generalises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.overfitting_leakage.signature import OverfittingSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

# Thresholds diagnose() reads the numbers with.
# Training loss above 85% of chance: the model did not even fit its data. Crushing weight decay
# (50) leaves it at >= 90% of chance on every seed; the strongest settings that still learn
# (weight decay 20, dropout 0.9) stay below 83%.
UNDERFIT_ABOVE = 0.85
GAP_ABOVE = 0.3  # clean held-out loss this many nats above training: a real generalisation gap
# Leakage needs the split audit (validation examples found verbatim in training) and the curves
# to agree. Validation must look better than the clean held-out set by more than two honest
# samples of 512 and 1,024 examples differ by chance (2 standard errors, optimism_noise), and
# the leaked share must be able to account for that: its expected optimism (the share times the
# clean gap) at least one standard error. A leak of 10% into 128 examples expects ~0.15 nats
# against a standard error of ~0.15; 5% into 2,048 expects 0.01 against 0.05, while the honest
# sets of seeds 0 and 2 already differ by 1.8 standard errors with nothing leaked. With
# duplicates found and either test failed the run cannot show the leak: "inconclusive".
OPTIMISM_Z = 2.0
EXPECTED_Z = 1.0


class OverfittingLeakage(Drill):
    slug = "overfitting-leakage"
    position = 90
    title = "Overfitting and leakage"
    summary = (
        "Validation loss turns up when a big model memorises; it stops turning up if it leaks."
    )
    symptom = "Training loss heads for zero while validation loss bottoms out early and climbs."
    scenario = (
        "An MLP with about 19,000 weights trains for 400 steps on a few hundred examples of a "
        "4-class problem whose labels are noisy: even the true rule gets many of them wrong. "
        "Every 10 steps it is scored on its training set, on 512 validation examples, and on "
        "1,024 clean held-out examples that are never copied anywhere. Change the amount of "
        "data, weight decay or dropout, repeat a few examples to fill the training rows, or "
        "copy part of the validation set into training, and predict where validation bottoms "
        "out and what it does afterwards."
    )
    version = "4"
    # Enough data or regularisation: validation follows training without turning up.
    healthy = "generalises"
    signature_type = OverfittingSignature
    knobs = (
        Knob(
            "train_size",
            "int",
            128,
            "Fresh training examples (leaked copies come on top). The number of steps is "
            "fixed, so a larger set is seen fewer times.",
            minimum=32,
            maximum=2048,
        ),
        Knob(
            "weight_decay",
            "float",
            0.0,
            "AdamW weight decay: each step shrinks every weight a little towards zero.",
            minimum=0.0,
            maximum=50.0,
        ),
        Knob(
            "dropout",
            "float",
            0.0,
            "Dropout probability after each hidden layer (all losses are scored in eval mode).",
            minimum=0.0,
            maximum=0.9,
        ),
        Knob(
            "leak",
            "float",
            0.0,
            "Fraction of the validation set duplicated into the training set: the split bug.",
            minimum=0.0,
            maximum=1.0,
        ),
        Knob(
            "distinct",
            "int",
            0,
            "Different examples among the fresh training rows; 0 makes every row its own "
            "example. Fewer repeat each one in turn to fill the rows, as a join that "
            "multiplies rows leaves a file.",
            minimum=0,
            maximum=2048,
        ),
    )
    hypotheses = (
        Hypothesis(
            "overfits",
            "The model memorises its small training set: training loss falls far below the "
            "validation loss, which reaches a minimum and then climbs, so the checkpoint to "
            "keep is the one at that minimum.",
        ),
        Hypothesis(
            "leakage",
            "Validation examples are also in the training set, where an exact-match search "
            "finds them: validation looks better than data the model never saw by the share "
            "that leaked, and with most of it leaked it follows the training loss down.",
        ),
        Hypothesis(
            "generalises",
            "The model cannot simply memorise (enough data or enough regularisation): "
            "validation and held-out losses stay close to the training loss.",
        ),
        Hypothesis(
            "underfit",
            "The model is held back so hard that it does not even fit its training data: "
            "every loss stays near the loss of guessing.",
        ),
        Hypothesis(
            "inconclusive",
            "The losses cannot show the leak: validation examples are also in the training "
            "set (an exact-match search finds them), but either validation looks no better "
            "than the clean held-out data by more than two honest samples differ by chance "
            "(2 standard errors), or the share that leaked is too small to make it look better "
            "by even 1 standard error, so what optimism there is may be chance.",
        ),
    )
    charts = (
        Chart(
            "losses",
            "Loss on training, validation and clean held-out data",
            ("train", "val", "clean"),
            "cross-entropy (nats)",
            labels={"train": "training", "val": "validation", "clean": "clean held-out"},
        ),
        Chart(
            "gaps",
            "Generalisation gap: each loss minus the training loss",
            ("val_minus_train", "clean_minus_train"),
            "nats",
            labels={
                "val_minus_train": "validation − training",
                "clean_minus_train": "clean held-out − training",
            },
        ),
    )
    observations = (
        Observation("best_step", "Step with the lowest validation loss (the checkpoint to keep)"),
        Observation("min_val_loss", "Lowest validation loss", "noise_floor"),
        Observation("final_val_loss", "Validation loss at the end", "min_val_loss"),
        Observation("final_train_loss", "Training loss at the end"),
        Observation("final_gap", "Validation minus training loss at the end"),
        Observation("val_rise", "How far validation climbed back from its minimum"),
        Observation("final_clean_loss", "Clean held-out loss at the end", "final_val_loss"),
        Observation("clean_gap", "Clean held-out minus training loss at the end"),
        Observation(
            "clean_loss_at_best_step",
            "Clean held-out loss of the checkpoint validation picks",
            "min_clean_loss",
        ),
        Observation(
            "val_optimism",
            "How much better validation looks than clean held-out data",
            "expected_optimism",
            reference_for=("leakage", "inconclusive"),
        ),
        Observation("optimism_noise", "How much two honest samples differ by chance (1 s.e.)"),
        Observation("duplicates_found", "Validation examples found verbatim in training"),
        Observation("train_examples", "Training rows (fresh rows plus copied ones)"),
        Observation("distinct_examples", "Different examples among the training rows"),
        Observation("noise_floor", "The true rule's own expected loss: the best possible"),
        Observation("chance_loss", "Loss of guessing uniformly, ln 4"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        train = signature.get("final_train_loss")
        val, clean = signature.get("final_val_loss"), signature.get("final_clean_loss")
        chance = signature.get("chance_loss")
        if train is None or val is None or clean is None:
            return "underfit"  # nothing was scored
        if chance is not None and train > UNDERFIT_ABOVE * chance:
            return "underfit"
        if (signature.get("duplicates_found") or 0) > 0:
            noise = signature.get("optimism_noise") or 0.0
            optimism = signature.get("val_optimism") or 0.0
            expected = signature.get("expected_optimism") or 0.0
            if optimism > OPTIMISM_Z * noise and expected >= EXPECTED_Z * noise:
                return "leakage"
            return "inconclusive"  # the audit finds copies; the curves cannot show them
        if clean - train <= GAP_ABOVE:
            return "generalises"
        return "overfits"


DRILL = OverfittingLeakage()
