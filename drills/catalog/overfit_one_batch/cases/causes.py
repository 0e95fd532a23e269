"""What may be wrong behind the overfit-one-batch cases: each cause sets the drill's knobs to
plant one bug (or none), names the verdict its run reads as, and the fix that heals it."""

from __future__ import annotations

from drills.cases.contract import Cause

CAUSES = (
    Cause(
        "loop-is-sound",
        "healthy",
        "Nothing is wrong: the loop memorises the batch as it should.",
        {"bug": "none"},
        "fits",
        fix="change-nothing",
    ),
    Cause(
        "labels-reshuffled",
        "data",
        "The targets are re-permuted every step, so they no longer belong to their inputs.",
        {"bug": "shuffled-labels"},
        "labels-detached",
        fix="keep-pairs-together",
        exercise="overfit-shuffled-pairs",
    ),
    Cause(
        "shape-mismatch",
        "loss",
        "The loss compares an (N, 1) prediction with an (N,) target, which broadcasts to "
        "every pair of examples.",
        {"bug": "broadcast-target"},
        "shape-broadcast",
        fix="match-shapes",
    ),
    Cause(
        "all-masked",
        "loss",
        "Every label is set to the ignore index, so no target counts in the loss.",
        {"bug": "all-padding"},
        "nothing-supervised",
        fix="unmask-labels",
    ),
    Cause(
        "noise-left-on",
        "evaluation",
        "Dropout and input noise are still on: the weights have memorised the batch, but "
        "the logged loss is measured through the noise.",
        {"bug": "randomness-on"},
        "randomness",
        fix="switch-off-noise",
    ),
    # noise-left-on's look-alike by construction: the very same steps (the same noise and
    # the same dropout masks, drawn in the same order), but the loop is sound and the model
    # is not, so switching to eval mode and dropping the loop's augmentation heals nothing.
    Cause(
        "noise-built-into-model",
        "evaluation",
        "The model's own dropout and input noise ignore eval mode (dropout called as "
        "F.dropout without training=self.training, a noise layer that never checks "
        "self.training): the loop switches to eval mode for the check, but every loss is "
        "still measured through noise.",
        {"bug": "randomness-built-in"},
        "randomness-built-in",
        fix="make-noise-follow-mode",
    ),
    Cause(
        "batch-written-into",
        "data",
        "Code in the loop writes into the batch it reuses (noise added in place to its "
        "features), so each step trains on a batch that has drifted further from the one "
        "loaded.",
        {"bug": "batch-edited-in-place"},
        "batch-drifts",
        fix="copy-the-batch",
    ),
    Cause(
        "loader-called-each-step",
        "data",
        "The loop asks the loader for a batch at every step instead of reusing the first, "
        "and the loader hands out a new one each time: no batch is ever seen twice.",
        {"bug": "fresh-batch-each-step"},
        "batch-drifts",
        fix="reuse-the-first-batch",
    ),
    # loader-called-each-step's look-alike by construction: the table's rows are the very
    # batches a fresh loader call per step draws, in order.
    Cause(
        "slice-follows-the-step",
        "data",
        "The loop was adapted from an epoch loop and still slices its batch from the data "
        "table with the step counter, so each step reads the next rows: no batch is ever "
        "seen twice.",
        {"bug": "slice-moves-each-step"},
        "batch-drifts",
        # The fix of the empty slice mends this one too: both slice elsewhere than data[:n].
        fix="slice-from-the-start",
    ),
    Cause(
        "output-pooled-over-batch",
        "loss",
        "The model's output is averaged over the batch dimension before the loss, so one "
        "prediction stands for every example.",
        {"bug": "batch-averaged-output"},
        "batch-averaged",
        fix="one-output-per-example",
    ),
    Cause(
        "batch-sliced-empty",
        "data",
        "The one batch is sliced from where the data ends, so it holds no example at all.",
        {"bug": "empty-slice"},
        "nothing-supervised",
        fix="slice-from-the-start",
    ),
)
