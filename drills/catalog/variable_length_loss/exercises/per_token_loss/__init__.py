"""Fix the loop: a padded batch's token losses summed and divided by the number of sequences, so
the loss is the per-token mean times the tokens per sequence. On ordinary batches of 7-9 tokens
each step is about 8 times the per-token step, on the long documents' batch about 48 times,
and plain SGD at the rate that trains a per-token mean blows up.

Accepted as fixes: the sum divided by the batch's real (unpadded) tokens, PyTorch's own
ignore-index mean over the flattened positions, or the same mean written out with a mask. The
judge measures steps, not what the loop logs: a divisor that is right on one batch only (a fixed
token budget, the rate divided by 8) or a mean that counts padding or weighs each sequence alike
moves the weights by another step on one of the two batches.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="per-token-loss",
    drill="variable-length-loss",
    title="Variable-length losses: a loss that means the same on every batch",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Print the number of real tokens in each batch beside the loss you log. How does the "
        "loss of the long documents' batch compare, per token, with an ordinary batch's?",
        "The sum over a batch's token losses grows with its tokens. Dividing by the number of "
        "sequences leaves that growth in; what count makes a batch of long documents weigh "
        "each token as an ordinary batch does?",
        "Divide the sum by the batch's real tokens: (labels != -100).sum(). A fixed number "
        "will not do: the judge steps on an ordinary batch and on the long one.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "per-token-step",
            "From the same weights, one step of the loop is the step of the batch's mean loss "
            "per real token, on an ordinary batch and on the long one",
        ),
        CheckSpec(
            "trains-to-floor",
            "The trained weights reach a loss per token near the lowest the source allows, on "
            "sequences they never saw",
        ),
    ),
    cases=("an ordinary batch", "the long batch"),
)
