"""Overfit a single batch: the fastest check that a training loop is wired correctly.

A capable model trained on one small, fixed batch must drive the loss to ~0. Each injected bug
leaves its own plateau, and the height of the plateau gives the bug away.

Two variants need no plateau to be seen, only the check that the fixed batch is fixed
(fixed_batch.py): an "augmentation" added with += to the features the loop reads from its
batch dict writes the noise into that dict, so every step after the first trains on a batch
that has drifted further from the one loaded, while the loss can fall to zero as a healthy
run's does; and dropout and input noise left on but the seed reset before every step draw the
same noise and the same masks each time, so the inputs are bit for bit the first step's and
the batch is memorised as that one draw shows it.

Four more bugs mimic others on the loss alone (issue 27: the symptom must not decide): a loop
that takes a new batch from its loader at every step stalls at chance as re-shuffled labels do;
a score regressed with the output pooled over the batch settles at the target variance as a
broadcast prediction does; a batch sliced from where the data ends holds no example, so it
fails with 0/0 as a fully masked batch does; and a model whose dropout and input noise ignore
eval mode trains on the very noise and masks a loop that leaves randomness on draws, while two
eval-mode passes over the batch give different outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.overfit_one_batch.signature import OverfitSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)

BUGS = (
    "none",
    "shuffled-labels",
    "broadcast-target",
    "all-padding",
    "randomness-on",
    "randomness-built-in",
    "batch-edited-in-place",
    "randomness-reseeded",
    "fresh-batch-each-step",
    "slice-moves-each-step",
    "batch-averaged-output",
    "empty-slice",
)

# Thresholds diagnose() reads the numbers with.
FITS_BELOW = 0.1  # final loss under this: the batch was memorised
PLATEAU_BAND = 0.15  # within ±15% of a theoretical floor counts as sitting on it
STILL_BELOW = 0.05  # weights moved less than 5% of their size: the optimizer barely acted
EVAL_GAP = 0.5  # eval-mode loss under half the training loss: training noise hides the fit
DIVERGED_ABOVE = 1.5  # final loss 50% above the initial loss: the steps made things worse
# A loss that ever stood 10x above where it started blew up, even if it came down again: the
# weights were thrown about (hundreds of times their size at lr=10), and ending near zero was luck.
BLEW_UP_ABOVE = 10.0


class OverfitOneBatch(Drill):
    slug = "overfit-one-batch"
    position = 10
    title = "Overfit a single batch"
    summary = "A model that cannot memorise 8 examples has a wiring bug, not a capacity problem."
    symptom = "The loss on one fixed batch of 8 examples will not go to zero."
    scenario = (
        "Before a long run, you train a small MLP for a few hundred steps on one fixed batch "
        "(16 random features, 4 balanced classes, plus a numeric score per example that one "
        "variant of the loop regresses instead of the class). A healthy loop memorises the "
        "batch; yours may carry one of several data bugs. Choose a bug, the batch size and the "
        "learning rate, predict where the loss will settle, then run it."
    )
    version = "5"  # 5: the batch sliced with the step counter; the loader's calls counted
    healthy = "fits"
    signature_type = OverfitSignature
    knobs = (
        Knob(
            "examples",
            "int",
            8,
            "How many examples the single batch holds. With one example some bugs become "
            "invisible, which is worth seeing once.",
            choices=(1, 2, 5, 8),
        ),
        Knob(
            "bug",
            "choice",
            "none",
            "The data bug injected into the loop: none; labels re-permuted within the batch "
            "every step; a (N, 1) score prediction compared with a (N,) score target; every "
            "label masked as padding; dropout and input-noise augmentation left on; dropout "
            "and input noise built into the model so that eval mode does not switch them off "
            "(the loop itself is sound); input "
            "noise added with += to the features the loop takes from its batch dict each "
            "step; dropout and input noise left on, with torch.manual_seed called before "
            "every step; a new batch fetched from the loader at every step; the batch sliced "
            "from the data table with the step counter, so each step reads the next rows; the "
            "score regressed with the output pooled over the batch; the batch sliced from where "
            "the data ends, so it is empty.",
            choices=BUGS,
        ),
        Knob(
            "lr",
            "float",
            1e-2,
            "Adam learning rate.",
            minimum=0.0,
            maximum=10.0,
            log_scale=True,
        ),
        Knob("steps", "int", 200, "Optimizer steps on the same batch.", minimum=10, maximum=2000),
    )
    hypotheses = (
        Hypothesis(
            "fits",
            "The loop is wired correctly: the model memorises the batch and the loss goes to zero.",
        ),
        Hypothesis(
            "labels-detached",
            "The targets no longer belong to their inputs, so the model can only learn how often "
            "each label occurs: the loss stalls at the entropy of the batch's labels.",
        ),
        Hypothesis(
            "shape-broadcast",
            "Prediction and target have different shapes, the loss compares every pair, and the "
            "best answer is the mean target: the loss stalls at the target variance.",
        ),
        Hypothesis(
            "batch-averaged",
            "The output is pooled over the batch before the loss: one prediction stands for "
            "every example, and the best it can do is the mean target, so the loss stalls at "
            "the target variance.",
        ),
        Hypothesis(
            "nothing-supervised",
            "No target reaches the loss (every label masked, or no example in the batch), so "
            "there is nothing to learn from and the mean loss is zero divided by zero.",
        ),
        Hypothesis(
            "randomness",
            "Dropout or augmentation is still on: the loss falls but stays noisy above zero, while "
            "the same weights in eval mode on clean inputs do much better.",
        ),
        Hypothesis(
            "randomness-built-in",
            "Dropout or input noise is built into the model in a way eval mode does not switch "
            "off: two eval-mode passes over the same clean batch give different outputs, so "
            "every loss, in training or in eval mode, is measured through noise.",
        ),
        Hypothesis(
            "batch-drifts",
            "The fixed batch is not fixed: from the second step on each step reads a batch "
            "that differs from the first step's (compared bit for bit), whether something "
            "writes into the batch the loop reuses or the loop reads another one. Whatever the "
            "loss does, and it can fall to zero as a healthy run's does, the check is not "
            "training on one batch.",
        ),
        Hypothesis(
            "randomness-pinned",
            "Dropout and input noise are on, but the seed is reset before every step: each "
            "step starts from the same random state and gives the model the same input, bit "
            "for bit, through the same dropout masks. The model learns the batch by heart as "
            "that one draw shows it, and the loss goes to about zero as with randomness off.",
        ),
        Hypothesis(
            "learning-rate",
            "The learning rate is wrong: the loss barely moves, or it jumps about and blows up.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss",
            ("loss",),
            "loss",
            labels={"loss": "training loss"},
            # ln 4 = 1.386 for the 4 classes: where a loop that cannot use the inputs sits.
            references=(Reference("chance, ln(C)", "chance_loss"),),
        ),
        Chart(
            "p_correct",
            "Probability of the correct class",
            ("p_correct",),
            "probability",
            labels={"p_correct": "p(correct class)"},
        ),
        Chart(
            "grad_norm",
            "Gradient norm",
            ("grad_norm",),
            "L2 norm",
            log_y=True,
            labels={"grad_norm": "gradient norm"},
        ),
    )
    observations = (
        Observation(
            "final_loss",
            "Final loss (mean of the last 10% of steps)",
            "label_entropy",
            reference_for=("labels-detached",),
        ),
        Observation("initial_loss", "Loss at the first step", "chance_loss"),
        Observation("peak_loss", "Highest loss of the run"),
        Observation("target_variance", "Variance of the score targets (where a broadcast settles)"),
        Observation(
            "eval_loss", "Loss in eval mode on the clean batch", "final_loss", ("randomness",)
        ),
        Observation(
            "eval_repeatable", "Two eval-mode passes over the clean batch give the same outputs"
        ),
        Observation("loss_noise", "Spread of the loss over the last 10% of steps"),
        Observation("final_p_correct", "Probability of the correct class at the end"),
        Observation("weight_change", "How far the weights moved, relative to their size"),
        Observation("supervised_targets", "Targets that count in the loss"),
        Observation("prediction_rows", "Rows of the prediction the loss is given"),
        Observation("nonfinite_step", "First step whose loss was not finite"),
        Observation("batch_changed_steps", "Steps whose batch differed from the first step's"),
        Observation("changed_tensors", "Tensors of the batch that changed between steps"),
        Observation("input_changed_steps", "Steps whose model input differed from the first's"),
        Observation("rng_changed_steps", "Steps that began from another random state"),
        Observation("batch_drift", "How far the batch ended from the one loaded, relative"),
        Observation("loader_calls", "Times the loop called the data loader"),
    )
    # Scored with diagnose()'s own thresholds: "about zero" is under FITS_BELOW, and a floor is
    # reached within PLATEAU_BAND. Over seeds 0-4 a clean loop ends at 0.000 and shuffled labels
    # at 1.386-1.390 against ln 4 = 1.386 (tests/drills/test_numeric_predictions.py).
    numeric_predictions = (
        NumericPrediction(
            "final_loss",
            "Where will the training loss settle (mean of the last 10% of steps)?",
            "nats",
            "A memorised batch goes to about zero; a loss that cannot use the inputs settles "
            "at the best it can do without them, e.g. the entropy of the label mix.",
            reported_as="the loss settled at",
            relative_band=PLATEAU_BAND,
            absolute_band=FITS_BELOW,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("supervised_targets") == 0:
            return "nothing-supervised"
        # Measured before anything the loss says: a batch that changed under the loop makes
        # every reading of its curve a reading of some other batch.
        if (signature.get("batch_changed_steps") or 0) > 0:
            return "batch-drifts"
        if signature.get("nonfinite_step") is not None:
            return "learning-rate"
        final, initial = signature.get("final_loss"), signature.get("initial_loss")
        if final is None or initial is None:
            return "learning-rate"
        peak = signature.get("peak_loss")
        if peak is not None and peak > BLEW_UP_ABOVE * initial:
            return "learning-rate"  # read the whole run, not only where it ended
        # Measured directly, as the batch is: eval mode that leaves the model's randomness on
        # noises every reading of the loss, whether it fell to zero or never moved.
        if signature.get("eval_repeatable") is False:
            return "randomness-built-in"
        if final < FITS_BELOW:
            return "randomness-pinned" if _pinned(signature) else "fits"
        weight_change = signature.get("weight_change")
        if weight_change is not None and weight_change < STILL_BELOW:
            return "learning-rate"  # the loss sits still because the weights do
        if final > DIVERGED_ABOVE * initial:
            return "learning-rate"
        eval_loss = signature.get("eval_loss")
        if eval_loss is not None and eval_loss < EVAL_GAP * final:
            return "randomness"
        # A prediction pooled over the batch settles where a broadcast one does: its shape tells.
        pooled = signature.get("prediction_rows") == 1 and (signature.get("examples") or 0) > 1
        floors = (
            ("target_variance", "batch-averaged" if pooled else "shape-broadcast"),
            ("label_entropy", "labels-detached"),
        )
        for reference, key in floors:
            floor = signature.get(reference)
            if floor is not None and abs(final - floor) <= PLATEAU_BAND * floor:
                return key
        return "learning-rate"  # moving, but slowly and towards no known floor


def _pinned(signature: Mapping[str, Any]) -> bool:
    """Noise was added to the inputs, yet every step gave the model the first step's input and
    started from the first step's random state."""
    return bool(signature.get("inputs_augmented")) and (
        signature.get("input_changed_steps") == 0 and signature.get("rng_changed_steps") == 0
    )


DRILL = OverfitOneBatch()
