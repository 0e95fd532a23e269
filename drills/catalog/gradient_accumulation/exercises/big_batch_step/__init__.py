"""Fix the loop: k micro-batches accumulated per SGD step, each micro-batch's loss left as it is,
so the gradients add up to k times the big batch's and every step is k times too long; at
k = 8 and the rate that trains one batch per step, the loss blows up.

Accepted as fixes: each micro-batch's loss divided by k before its backward, or the k losses
averaged before a single backward (the same gradient), or the rate divided by k with the losses
left as they are. The last moves the weights by the very step the big batch takes (plain SGD
without momentum or weight decay is linear in the gradient: lr/k times k gradients is lr times
their mean, to float rounding), and the judge measures steps, not what .grad held. It is the
more fragile fix, since anything that reads the gradient itself (clipping, a norm on the
dashboard) still sees k times the big batch's; the hints lead to the division of the loss.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="accumulation-big-batch-step",
    drill="gradient-accumulation",
    title="Gradient accumulation: the big batch that blows up",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The curve is not where this shows. Take one step of your loop, and one plain SGD step "
        "on a single batch holding the same micro-batches, from the same weights: how far "
        "does each move the weights, and in which direction?",
        "Each micro-batch's loss is already a mean over its own 16 examples. Backward adds "
        "the k gradients together: what do k such gradients add up to, next to the gradient "
        "of the mean over all k × 16 examples?",
        "Make the k gradients add up to the big batch's: divide each micro-batch's loss by "
        "micro_batches_per_step before its backward. A fixed number will not do: the judge "
        "runs several values of k, 1 among them.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "big-batch-step",
            "From the same weights, one step of the loop is the step one batch of the same "
            "examples takes, whatever the number of micro-batches",
        ),
        CheckSpec(
            "trains-to-floor",
            "At 8 micro-batches per step, training reaches the lowest loss the data allow",
        ),
    ),
    cases=("k = 1", "k = 3", "k = 8"),
)
