"""Fix the loop: a small classifier trained for 8 epochs over the same batches in the same order,
where some examples of one batch carry another class's label. The loss jumps at that batch in
every epoch; lowering the rate, clipping the gradient or skipping the steps whose loss is high
leaves the jump (and the examples) in place.

Accepted as fixes: any loop that finds those examples and trains without them, keeping the rest:
a replay of the batch that spikes under a model that never learned from it (the reference), a
check of each example against its class's typical features, a vote of its nearest neighbours.
Judged on hidden runs whose wrong labels sit at another place than the drill's, fewer of them,
by what the weights each step met say about the steps (reading.py), never by what the loop logs.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="loss-spikes-wrong-labels",
    drill="loss-spikes",
    title="Loss spikes: the batch that comes back every epoch",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Print the loss of every step with its place in the epoch. Does the jump come back at "
        "the same place? Then ask what is different about that batch, not about the optimizer.",
        "Look at the examples of that batch one by one: the loss of each, under a model trained "
        "on every other batch. Most look like the rest of the data; some disagree with it.",
        "Train a copy of the model on all the batches but the one that jumps, and keep from that "
        "batch only the examples it finds no worse than guessing (a loss up to ln 4). Then "
        "train the real model on the kept examples, with the loop as it was.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec(
            "steps-readable",
            "Every step reads as plain gradient descent on examples of the data as given",
        ),
        CheckSpec("wrong-labels-out", "No example whose label is wrong is trained on"),
        CheckSpec("right-labels-kept", "The examples whose label is right are kept"),
        CheckSpec(
            "no-recurring-spike", "The loss no longer jumps at the same place epoch after epoch"
        ),
        CheckSpec("learns", "The trained model knows the classes of the data"),
    ),
    cases=("run A", "run B"),
)
