"""Fix the loop: an overfit check that fails on 2 and 5 examples but passes on 1.

The bug: features and labels are shuffled with two independent permutations every step, so the
pairs the loss sees are random. (Chosen over a broadcast target because the judge can measure
the fix with the drill's own reading, cross-entropy on the true pairs against the drill's
near-zero band, and because the ladder 1 → 2 → 5 shows it: a single example is its own
permutation, so the broken loop still memorises it.)
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="overfit-shuffled-pairs",
    drill="overfit-one-batch",
    title="Overfit one batch: the ladder breaks at two",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The ladder tells you something: one example is memorised, two are not. What is the "
        "same for one example and different for two, whatever the loop does to the batch?",
        "Print the (input, label) pairs the loss sees on two consecutive steps, next to the "
        "batch you were given. Does each input still meet its own label?",
        "Shuffling is harmless only if inputs and labels move together: draw one permutation "
        "and index both tensors with it (or do not shuffle a single batch at all).",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec("fits-1", "The loss on a batch of 1 example goes to about zero"),
        CheckSpec("fits-2", "The loss on a batch of 2 examples goes to about zero"),
        CheckSpec("fits-5", "The loss on a batch of 5 examples goes to about zero"),
    ),
    cases=("1 example", "2 examples", "5 examples"),
)
