"""Fix the loop: a large MLP trained for a fixed 40 epochs on a small, noisy training table and
kept at its last epoch, where the table also holds exact copies of some validation examples. The
copies pull the validation loss down with the training loss, so it never warns that the model is
memorising; the last epoch is far past the best one.

Accepted as fixes: every training row equal to a validation example left out (validation stays
whole), then the weights of the validation minimum kept, with early stopping after a few epochs
without a new one or over the whole budget. Judged on hidden runs of other sizes (64 fresh rows
and 512) by hooks that count what every example was trained on, and by the kept weights' loss on
a held-out set the judge never hands out, against the best epoch of its own honest replay: a
fixed number of epochs, the lowest training loss, early stopping on a validation set that still
has copies in training, or regularising until nothing is learned each fail a named check.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="overfitting-honest-early-stop",
    drill="overfitting-leakage",
    title="Overfitting and leakage: the weights worth keeping",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The validation loss falls for as long as the training loss does. Could the model have "
        "seen some validation tickets already? Count the validation rows that also appear, "
        "feature for feature, in the training table.",
        "Leave every training row that equals a validation row out of training, and keep "
        "validation whole. Then plot validation again: where does it bottom out, and what do "
        "the epochs after that do to the model you return?",
        "Drop the rows of train_x found in val_x, compared exactly (a set of tuple(row) does "
        "it; torch.cdist's fast formula leaves a copy a little above 0). After every epoch, "
        "keep a copy of model.state_dict() whenever validation reaches a new minimum, stop "
        "after 5 epochs without one, and load the copy back before returning. A fixed number "
        "of epochs will not do: the judge's tables have other sizes.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("validation-kept-out", "No validation example, nor a copy of one, is trained on"),
        CheckSpec(
            "not-overfit",
            "The kept weights have not memorised their training rows: on unseen tickets they do "
            "about as well as the best epoch of the same training",
        ),
        CheckSpec(
            "not-underfit",
            "The kept weights have learned what the data allows: on unseen tickets they do about "
            "as well as the best epoch of the same training",
        ),
    ),
    cases=("a small table", "a large table"),
)
