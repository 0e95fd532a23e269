"""Fix the loop: a tiny attention tagger trained on padded batches with neither mask. Every
token attends to the padding keys, so a sequence's outputs depend on how far its batch is
padded; and the loss averages every position, padding (labelled as such) included, so the
logged loss is mostly the easy padding's and falls as the padding grows.

Accepted as fixes: the padding keys kept out of every softmax (-inf, or any score low enough
that its weight is exactly 0, or a boolean mask given to PyTorch's attention), and a loss that
is the mean cross-entropy over the real tokens (an ignore index, a mask with the real tokens'
count as divisor, or the real positions picked out). The judge measures outside the sandbox:
the model's outputs padded against the problem's model run alone, and the gradient one step
of the loss sends to the logits against the per-real-token mean's; one mask fixed without the
other, padding masked as queries or with a score of 0, or a divisor of every position is each
caught by the check it breaks.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="padding-both-masks",
    drill="padding-masks",
    title="Padding masks: a tagger that pads and is none the wiser",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Run one sequence alone and the same sequence padded to 64 through the model, and "
        "compare a real token's logits. Then log the loss over the real tokens only beside the "
        "one your loop logs, at two padding lengths.",
        "Two things see the padding. In the attention, every token can weigh the padding "
        "positions; in the loss, the padding positions are averaged with the real ones. Each "
        "needs its own mask, and one does not stand in for the other.",
        "Before the softmax, set the scores of padding keys (the last axis) to -inf: "
        "scores.masked_fill((tokens == PAD)[:, None, :], float('-inf')). In the loss, leave "
        "padding out of the mean: F.cross_entropy(..., ignore_index=PAD_LABEL).",
    ),
    provides=("TinyAttention", "train"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "same-padded-or-alone",
            "A real token's output is the same whatever padding its sequence carries: the "
            "same as the model gives the sequence alone, before and after training",
        ),
        CheckSpec(
            "loss-over-real-tokens",
            "In one step of the loop, the loss depends on the real tokens' outputs only, each "
            "weighed as in the mean over the batch's real tokens",
        ),
        CheckSpec(
            "trains",
            "Trained, the model labels the real tokens of sequences it never saw well",
        ),
    ),
    cases=("run at length 24", "run at length 64"),
)
