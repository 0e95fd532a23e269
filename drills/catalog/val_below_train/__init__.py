"""Validation below training: the online training loss is measured under harsher conditions.

Dropout and input-noise augmentation are on while the training loss is recorded and off when
validation runs, so a validation loss below the training loss is usually a measurement effect,
not an easier validation set. Re-measuring the training set in eval mode settles which it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.val_below_train.reading import diagnose as read_run
from drills.catalog.val_below_train.signature import ValBelowTrainSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

EVAL_MODES = ("eval", "train")
RANDOMNESS = ("follows-mode", "built-in")
DATA_SPLITS = (
    "fresh",
    "easy-val",
    "trimmed-val",
    "small-train",
    "subset-train",
    "repeated-rows",
    "filtered-val",
    "val-from-train",
)

# The verdicts under which the model learned the teacher without memorising its training set,
# so the re-scored training loss should sit at the training set's floor.
LEARNED_THE_TEACHER = ("no-gap", "train-noise", "val-in-train-mode", "val-easier", "inconclusive")


class ValBelowTrain(Drill):
    slug = "val-below-train"
    position = 40
    title = "Validation below training"
    summary = "Dropout and augmentation make the loss you log while training look worse than it is."
    symptom = "The validation loss is lower than the training loss, epoch after epoch."
    scenario = (
        "A small MLP with dropout learns a 4-class problem from 8,192 examples; the validation "
        "set is 2,048 fresh examples from the same source. Each epoch the loop logs the mean "
        "of its batch losses (the usual training curve), re-scores the training set with the "
        "model in eval mode, and scores the validation set. Turn dropout and input-noise "
        "augmentation up or down, leave the model in train mode while validating, or change "
        "where the sets come from, and predict how the three curves will sit. (The logged "
        "curve also lags a little because the weights improve during the epoch; with 20 "
        "epochs and a cosine schedule that lag is under 0.001 nats here, far below what "
        "dropout adds.)"
    )
    # 5: the training subset holds 512 examples, not 640; 6: the trimmed validation set keeps
    # what the teacher is at least 70% sure of, not 62%; 8: measurements draw their masks from
    # a copy of torch's generator (validation in train mode no longer shifts training's masks);
    # 9: a smaller set is repeated to fill the epoch and shuffled as a whole, not reshuffled
    # each time it is used up (repeated-rows now trains subset-train's very batches)
    version = "9"
    # Evaluated correctly, dropout/augmentation make online training loss sit above validation.
    healthy = "train-noise"
    signature_type = ValBelowTrainSignature
    knobs = (
        Knob(
            "dropout",
            "float",
            0.5,
            "Dropout probability after each hidden layer. Active in train mode only.",
            minimum=0.0,
            maximum=0.9,
        ),
        Knob(
            "augment_noise",
            "float",
            0.0,
            "Augmentation: standard deviation of Gaussian noise added to the inputs (which have "
            "unit variance). It is a layer of the model, so it too is active in train mode only.",
            minimum=0.0,
            maximum=1.0,
        ),
        Knob(
            "eval_mode",
            "choice",
            "eval",
            "The mode the model is in while validation runs: eval (correct), or train (the bug: "
            "model.eval() was never called, so dropout and noise stay on).",
            choices=EVAL_MODES,
        ),
        Knob(
            "randomness",
            "choice",
            "follows-mode",
            "follows-mode: dropout and noise are layers that model.eval() switches off; "
            "built-in (a bug): they are written into the model's forward without asking its "
            "mode (F.dropout with training left at True), so eval mode switches nothing off and "
            "every curve is measured with them on.",
            choices=RANDOMNESS,
        ),
        Knob(
            "data",
            "choice",
            "fresh",
            "Where the sets come from: fresh (training and validation are independent draws "
            "from the same teacher); easy-val (validation keeps only examples the teacher is at "
            "least 90% sure about, so it is easier than training); trimmed-val (a milder "
            "cleaning: validation drops only the examples the teacher is less than 70% sure "
            "about); small-train (only 128 training examples, seen again and again, few enough "
            "to memorise); subset-train (512 training examples, seen 16 times an epoch: "
            "fitted better than fresh data, though not by heart); repeated-rows (8,192 training "
            "rows that hold only 512 examples, each repeated 16 times, as a join that multiplies "
            "rows leaves a table: seen as often as subset-train's); filtered-val (the "
            "validation file is an honest draw, but its loader applies a cleaning filter that "
            "keeps only what the teacher is at least 70% sure about: trimmed-val's very set, "
            "trimmed on the way in); val-from-train (the validation rows were cut from the "
            "training table but never removed from it: validation scores examples the model "
            "trains on).",
            choices=DATA_SPLITS,
        ),
    )
    hypotheses = (
        Hypothesis(
            "train-noise",
            "Dropout or augmentation inflates the logged training loss: scored again without "
            "them, the training data does as well as validation, and both sit below the logged "
            "curve.",
        ),
        Hypothesis(
            "no-gap",
            "Nothing random is switched on while training (or too little to measure), so the "
            "logged training loss, the re-scored training loss and the validation loss lie on "
            "top of each other.",
        ),
        Hypothesis(
            "val-in-train-mode",
            "Validation runs with dropout and noise still on: the validation curve jumps about "
            "from epoch to epoch and sits up with the logged training loss, above the re-scored "
            "training loss.",
        ),
        Hypothesis(
            "randomness-built-in",
            "Dropout or noise is built into the model so that eval mode does not switch it "
            "off: two eval-mode passes over the same data disagree, and every curve, the "
            "re-scored training loss and validation included, is measured with it on.",
        ),
        Hypothesis(
            "val-leaks",
            "The validation rows are also training rows (cut from the training table, never "
            "removed from it): validation scores examples the model trains on, so wherever it "
            "sits against the training curves, it says nothing about new data.",
        ),
        Hypothesis(
            "val-easier",
            "The validation examples are easier than the training examples (the teacher is surer "
            "about them): validation stays below even the re-scored training loss.",
        ),
        Hypothesis(
            "overfits",
            "The model has memorised its training examples: the re-scored training loss sits "
            "clearly below the validation loss (even below the teacher's own floor), and "
            "validation does not wobble with the logged loss.",
        ),
        Hypothesis(
            "underfit",
            "There is so much noise that the model hardly learns: every curve stays much "
            "closer to the loss of guessing (ln 4) than to what the teacher achieves.",
        ),
        Hypothesis(
            "inconclusive",
            "This run cannot tell: something random is on while training (the logged loss sits "
            "above the re-scored one by more than the 0.005 nats the weights drift within an "
            "epoch), but it lifts the logged loss by 15% or less, or validation does not sit "
            "clearly (8%) below the logged curve: too little to say whether it is what puts "
            "validation where it is.",
        ),
    )
    charts = (
        Chart(
            "losses",
            "Loss per epoch, measured three ways",
            ("train_online", "train_eval", "val"),
            "cross-entropy (nats)",
            x_label="epoch",
            labels={
                "train_online": "training, online",
                "train_eval": "training, eval mode",
                "val": "validation",
            },
        ),
        Chart(
            "gaps",
            "Distance from the training loss re-scored in eval mode",
            ("online_minus_train_eval", "val_minus_train_eval"),
            "nats",
            x_label="epoch",
            labels={
                "online_minus_train_eval": "online − eval-mode training",
                "val_minus_train_eval": "validation − eval-mode training",
            },
        ),
    )
    # Each reference sits beside the runs it describes: the logged loss matches the re-scored
    # one only with nothing random on; a model that learned the teacher (and did not memorise
    # its training set) ends at the teacher's floor of each set; validation matches the
    # re-scored training loss only when both sets come from the same source and are measured
    # alike.
    observations = (
        Observation(
            "online_train_loss",
            "Logged training loss (mean of each epoch's batches, last epochs)",
            "train_eval_loss",
            reference_for=("no-gap",),
        ),
        Observation(
            "train_eval_loss",
            "Training loss re-scored in eval mode (last epochs)",
            "train_noise_floor",
            reference_for=LEARNED_THE_TEACHER,
        ),
        Observation(
            "val_loss",
            "Validation loss (last epochs)",
            "train_eval_loss",
            reference_for=("no-gap", "train-noise"),
        ),
        Observation("online_gap", "Logged minus re-scored training loss"),
        Observation("val_gap", "Validation minus re-scored training loss"),
        Observation("val_below_online", "How far validation sits below the logged training loss"),
        Observation(
            "val_spread",
            "Epoch-to-epoch spread of the validation loss (std, last epochs)",
            "train_eval_spread",
            reference_for=("no-gap", "train-noise", "val-easier", "underfit"),
        ),
        Observation(
            "learned_share",
            "Share of the learnable loss removed (0: guessing, 1: as good as the teacher)",
        ),
        Observation(
            "noise_floor",
            "Teacher's own expected loss on the validation set: the best any model can do there",
        ),
        Observation("train_noise_floor", "... and on the training set"),
        Observation("chance_loss", "Loss of guessing uniformly, ln 4"),
        Observation("train_examples", "Rows in the training set"),
        Observation("distinct_examples", "Different examples among those rows"),
        Observation("val_file_rows", "Rows in the validation file, before its loader"),
        Observation("val_examples", "Examples the validation loader yields"),
        Observation("duplicates_found", "Validation examples found verbatim in training"),
        Observation("eval_repeatable", "Two eval-mode passes over validation agree"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        return read_run(signature, error)


DRILL = ValBelowTrain()
