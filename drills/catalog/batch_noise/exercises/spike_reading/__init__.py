"""Write it: read a spiking batch against its training set at the weights it met: the batch's
and the set's mean losses, the batch's height in sigma / sqrt(B) of the per-example losses, the
worst loss a batch of B distinct training examples can have, and whether the batch lies beyond
it. Each hidden run has its own model (linear, or one hidden layer), set (256-1024 examples)
and batch of 1 to 64: hard examples of the set, ordinary ones, or a batch the set cannot give.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="batch-noise-spike",
    drill="batch-noise",
    title="Batch size and noise: could the training set have given that batch?",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Start from every training example's own loss at these weights (reduction='none'). "
        "The set's loss is their mean; a batch of B is a mean of B of them: how far does such "
        "a mean usually stray from the set's?",
        "A height of many sigma is not proof: these losses have a long tail, and at B = 1 a "
        "single hard example stands far out. Ask instead what the highest loss is that B of "
        "the set's own examples, all different, could have together.",
        "Sort the per-example losses, highest first: the worst batch of B is the mean of the "
        "first B (torch.topk). The batch is corrupt when its loss passes that by more than "
        "0.1%; its height is (batch_loss - set_loss) / (losses.std() / sqrt(B)).",
    ),
    provides=("read_spike",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("report", "It returns a report in the documented format for every batch"),
        CheckSpec("losses", "It measures the batch's loss and the training set's"),
        CheckSpec("sigmas", "It gives the batch's height in the spread a batch of B has"),
        CheckSpec("worst-batch", "It finds the highest loss a batch of the set could have"),
        CheckSpec("verdict", "It tells a batch the set could give from one it could not"),
    ),
    cases=(
        "B = 1, a hard example",
        "B = 1, features in other units",
        "B = 4, an ordinary batch",
        "B = 16, a hard batch",
        "B = 16, labels from another source",
        "B = 8, one example eight times",
        "B = 64, an ordinary batch",
    ),
)
