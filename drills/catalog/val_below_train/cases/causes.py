"""What may be wrong behind the val-below-train cases: each cause sets the drill's knobs to
plant one reason for where validation sits (or none), names the verdict its run reads as, and
the fix that heals it. Several are another's twin by construction (see the cases' module)."""

from __future__ import annotations

from drills.cases.contract import Cause

CAUSES = (
    Cause(
        "nothing-wrong",
        "healthy",
        "Nothing is wrong: the logged training loss is taken with dropout on, so it looks "
        "worse than what the model does on the same data.",
        {"eval_mode": "eval", "data": "fresh"},
        "train-noise",
        fix="change-nothing",
    ),
    # nothing-wrong's look-alike by construction: the very training run, validated on
    # training rows instead of fresh ones. A model that learned the teacher from 8,192
    # examples scores its own rows about as it scores new ones, so the curves differ only
    # by which 2,048 examples validation happens to hold.
    Cause(
        "validation-copied-into-training",
        "data",
        "The validation rows were cut from the training table but never removed from it: "
        "every validation example is also trained on, so validation scores data the model "
        "has learned.",
        {"data": "val-from-train"},
        "val-leaks",
        fix="deduplicate-split",
    ),
    Cause(
        "easier-validation-split",
        "data",
        "The validation examples were picked differently from the training ones and are "
        "easier to get right.",
        {"data": "trimmed-val"},
        "val-easier",
        fix="draw-validation-like-training",
    ),
    # easier-validation-split's look-alike by construction: the very validation set, made
    # by a filter in the loader instead of stored in the file.
    Cause(
        "validation-filtered-on-load",
        "data",
        "The validation file is an honest draw, but its loader applies a cleaning filter that "
        "drops the examples the labels are least sure of, so the validation the model sees "
        "is easier than the training data.",
        {"data": "filtered-val"},
        "val-easier",
        fix="drop-the-loader-filter",
    ),
    Cause(
        "validation-with-dropout-on",
        "evaluation",
        "The model is never switched to evaluation mode before validating, so dropout is "
        "still on while validation is scored.",
        {"eval_mode": "train"},
        "val-in-train-mode",
        fix="validate-in-eval-mode",
    ),
    # validation-with-dropout-on's look-alike by construction: the loop switches to eval
    # mode, but the model's dropout ignores it, so validation draws the very same masks.
    Cause(
        "dropout-built-into-model",
        "evaluation",
        "The loop calls model.eval() before validating, but the model's dropout is written "
        "as F.dropout without training=self.training: eval mode switches nothing off, so "
        "validation is scored with dropout on.",
        {"randomness": "built-in"},
        "randomness-built-in",
        fix="make-dropout-follow-mode",
    ),
    Cause(
        "memorised-training-set",
        "data",
        "Only a subset of the training data is used, seen over and over: the model fits "
        "those examples better than new ones.",
        {"data": "subset-train"},
        "overfits",
        fix="train-on-full-set",
    ),
    # memorised-training-set's look-alike by construction: the same 512 examples, shuffled
    # into the very batches the subset makes; here they fill all 8,192 rows, so the training
    # set looks full-sized until its distinct examples are counted.
    Cause(
        "rows-repeated",
        "data",
        "A join multiplied the rows of the training table: its 8,192 rows hold only 512 "
        "different examples, seen over and over, and the model fits those better than new "
        "ones.",
        {"data": "repeated-rows"},
        "overfits",
        fix="rebuild-training-rows",
    ),
)
