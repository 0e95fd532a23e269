"""Cases on the overfit-one-batch drill: one fixed batch that will not go to zero, a batch that
does but is measured through noise, and a check that reaches zero on a batch that was not the
same from step to step. Each plateau has a look-alike from another bug (a batch fetched anew
at every step stalls where re-shuffled labels do, an output pooled over the batch where a
broadcast prediction does, an empty batch fails as a fully masked one does, and noise the
model keeps in eval mode trains exactly as noise the loop left on). Two bugs are the same run
by construction: noise kept in eval mode and noise the loop left on, and a batch fetched anew
at every step and rows sliced with the step counter from a table that holds those very
batches. The height where the loss stops, what the loss is actually compared with (shapes
included), the same weights measured without noise, eval mode run twice, the loader's calls
counted, and the batch set beside the first step's tell the causes apart. The causes are in
causes.py, the experiments' readings in readings.py."""

from __future__ import annotations

from drills.cases.contract import Case, CaseSet, Change, Experiment, Fix, ShownChart
from drills.cases.readings import eval_twice
from drills.catalog.overfit_one_batch.cases.causes import CAUSES
from drills.catalog.overfit_one_batch.cases.readings import (
    batch_against_first,
    clean_remeasure,
    loader_calls,
    memorised_or_not,
    plateau_reading,
    what_the_loss_compares,
)

CASE_SET = CaseSet(
    drill="overfit-one-batch",
    causes=CAUSES,
    experiments=(
        Experiment(
            "clean-remeasure",
            "Re-measure the batch in eval mode",
            "Put the final weights in eval mode and compute the loss once more on the clean "
            "batch: does it agree with the logged training loss?",
            shows=("numbers",),
            observations=("final_loss", "eval_loss"),
            reading=clean_remeasure,
        ),
        Experiment(
            "count-loader-calls",
            "Count the loader's calls",
            "Put a counter in the data loader and report how many times the loop called it "
            "over the run.",
            shows=("numbers",),
            observations=("loader_calls",),
            reading=loader_calls,
        ),
        Experiment(
            "eval-twice",
            "Run the clean batch twice in eval mode",
            "Put the final weights in eval mode and pass the clean batch through the model "
            "twice: are the two outputs the same, bit for bit?",
            shows=("numbers",),
            observations=("eval_repeatable",),
            reading=eval_twice,
        ),
        Experiment(
            "inspect-targets",
            "Look at what the loss is given",
            "Print the shapes and a few decoded (input, label, target in the loss) triples.",
            shows=("inputs", "numbers"),
            observations=("supervised_targets", "prediction_rows"),
            reading=what_the_loss_compares,
        ),
        Experiment(
            "single-example",
            "Overfit a single example",
            "Shrink the batch to one example and train again: can the loop memorise that?",
            change=Change(set={"examples": 1}),
            shows=("numbers",),
            observations=("initial_loss", "final_loss"),
            reading=memorised_or_not,
        ),
        Experiment(
            "much-longer",
            "Train much longer",
            "Run 800 steps on the same batch instead of a few hundred: does the loss reach zero "
            "given time?",
            change=Change(set={"steps": 800}),
            shows=("numbers",),
            observations=("final_loss", "loss_noise"),
            reading=memorised_or_not,
        ),
        Experiment(
            "plateau-height",
            "Compare the plateau with reference levels",
            "Set where the loss settles beside chance level and the entropy of the batch's "
            "label mix, and check how far the weights moved.",
            shows=("numbers",),
            observations=("final_loss", "chance_loss", "label_entropy", "weight_change"),
            reading=plateau_reading,
        ),
        Experiment(
            "batch-against-first",
            "Compare each step's batch with the first",
            "Keep a clone of the batch as the first step reads it and compare the batch of every "
            "later step with it, tensor by tensor and bit for bit: is the fixed batch fixed?",
            shows=("numbers",),
            observations=(
                "batch_changed_steps",
                "first_batch_change",
                "changed_tensors",
                "batch_drift",
            ),
            reading=batch_against_first,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the loop is sound.", Change()),
        Fix(
            "keep-pairs-together",
            "Index inputs and labels with the same permutation, or not at all, so each target "
            "stays with its input.",
            Change(replace={"bug": {"shuffled-labels": "none"}}),
        ),
        Fix(
            "match-shapes",
            "Squeeze the prediction to (N,) (or train on the class labels) so the loss compares "
            "each example with its own target.",
            Change(replace={"bug": {"broadcast-target": "none"}}),
        ),
        Fix(
            "unmask-labels",
            "Build the mask from the padding positions only, so the real labels count.",
            Change(replace={"bug": {"all-padding": "none"}}),
        ),
        Fix(
            "switch-off-noise",
            "Call model.eval() and skip the augmentation for the overfit check.",
            Change(replace={"bug": {"randomness-on": "none"}}),
        ),
        Fix(
            "make-noise-follow-mode",
            "Make the model's dropout and noise follow its mode: pass training=self.training to "
            "F.dropout and add the noise only when self.training is true.",
            Change(replace={"bug": {"randomness-built-in": "none"}}),
        ),
        Fix(
            "copy-the-batch",
            "Clone the batch's tensors before changing them, so the batch the loop reuses stays "
            "as it was loaded.",
            Change(replace={"bug": {"batch-edited-in-place": "none"}}),
        ),
        Fix(
            "reuse-the-first-batch",
            "Take one batch from the loader before the loop and train on that batch at every step.",
            Change(replace={"bug": {"fresh-batch-each-step": "none"}}),
        ),
        Fix(
            "one-output-per-example",
            "Drop the pooling over the batch dimension and squeeze the output to (N,), so each "
            "example gets its own prediction.",
            Change(replace={"bug": {"batch-averaged-output": "none"}}),
        ),
        Fix(
            "slice-from-the-start",
            "Slice the batch from the start of the data (data[:n]) at every step, and check its "
            "size before training.",
            Change(replace={"bug": {"empty-slice": "none", "slice-moves-each-step": "none"}}),
        ),
        Fix(
            "lower-learning-rate",
            "Lower the learning rate tenfold: the steps are too large to settle.",
            Change(scale={"lr": 0.1}),
        ),
        Fix(
            "bigger-model",
            "Widen the hidden layers: the model lacks the capacity to memorise the batch.",
            Change(),  # no width knob: eight examples never lacked capacity
        ),
    ),
    charts=(
        ShownChart("Loss on the batch", "loss", {"loss": "training loss"}),
        ShownChart("Gradient size", "L2 norm", {"grad_norm": "gradient norm"}, log_y=True),
    ),
    nuisance={"lr": (0.005, 0.01, 0.02), "steps": (200, 250, 300)},
    symptom_observations=("initial_loss", "final_loss"),
)

CASES = (
    Case(
        "a-sanity-check",
        "The one-batch sanity check",
        "Before launching a long run you train a small classifier on one fixed batch of eight "
        "examples, expecting the loss to reach zero in a few hundred steps. The same code trained "
        "fine last week.",
        CASE_SET,
        causes=(
            "labels-reshuffled",
            "loop-is-sound",
            "noise-left-on",
            "noise-built-into-model",
            "loader-called-each-step",
            "slice-follows-the-step",
            "batch-written-into",
        ),
    ),
    Case(
        "an-adapted-loop",
        "An adapted sanity loop",
        "You adapted the one-batch sanity loop for a new model and set it to train on eight "
        "examples. Does the adapted loop still fit its batch?",
        CASE_SET,
        causes=("shape-mismatch", "all-masked", "output-pooled-over-batch", "batch-sliced-empty"),
    ),
    Case(
        "a-colleagues-overfit-check",
        "A colleague's overfit check",
        "A colleague ran the overfit check on eight examples and asks you whether the model is too"
        " small before they go on.",
        CASE_SET,
        causes=(
            "noise-left-on",
            "noise-built-into-model",
            "loop-is-sound",
            "labels-reshuffled",
            "batch-written-into",
            "loader-called-each-step",
            "slice-follows-the-step",
        ),
    ),
    Case(
        "a-check-that-passed",
        "A check that passed",
        "Your one-batch sanity check on eight examples reached zero loss within a few hundred "
        "steps, after a teammate refactored the loop to share its preprocessing with the real "
        "training script. Before you rely on it, decide whether the check itself can be "
        "trusted.",
        CASE_SET,
        causes=("loop-is-sound", "batch-written-into"),
    ),
)
