"""Fix the split: reviews split into training and validation row by row, at random. Users who
wrote several reviews land on both sides, and so do reviews posted again under another account
with the text barely changed; an exact-match search finds nothing, and validation flatters.

Accepted as fixes: any split that keeps every user on one side and leaves no validation review
with a training review within the drill's near-copy distance, with about a quarter of the rows
in validation: whole groups (a user's reviews and their near copies) drawn at random, or a split
by user whose flagged validation rows are then moved into training. Judged on what the split
does, measured outside the sandbox with the drill's own audits, and on the drill's reading of a
model trained on it.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="group-leakage-honest-split",
    drill="group-leakage",
    title="Group leakage: the validation set that knows its writers",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Count, for your split, how many validation reviews were written by someone who also "
        "has reviews in training. What can the model learn about a writer from their training "
        "reviews that it could never know about a new user?",
        "Keep all the reviews of a user on one side. Then look for validation reviews that sit "
        "very close to a training review in the features, whoever posted them: an exact "
        "comparison misses a copy whose text changed by one character.",
        "Group the rows first: one user's reviews belong together, and so do two rows closer "
        "than 0.2. Put whole groups into validation, in a random order from the generator, "
        "until about a quarter of the rows is there.",
    ),
    provides=("split",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("validation-size", "About a quarter of the reviews go to validation"),
        CheckSpec("users-apart", "No user has reviews on both sides of the split"),
        CheckSpec("no-near-copies", "No validation review has a near copy in training"),
    ),
    cases=("2 reviews per user", "4 reviews per user", "1 review per user"),
)
