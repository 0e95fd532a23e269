"""Write it: the two tools an overfit check needs before it can be trusted. batch_is_static()
tells a loader whose single batch is the same on two passes, bit for bit, from one whose batch
changes (shuffled, augmented, changed in place, labels reordered); seeded_overfit() makes a
short run repeatable: the same seed gives the same batch and the same loss at every step, while
dropout still draws afresh at each step. The judge measures both itself (problem.py)."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="static-batch-seeded-overfit",
    drill="overfit-one-batch",
    title="Is the fixed batch fixed, and does the run repeat?",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Two passes can hand you two different tensors with equal values, or one tensor whose "
        "values changed between them. What must you keep from the first pass so that the "
        "second can be compared with it? And which random number generators does the run "
        "draw from: the loader's, the model's initialisation, dropout?",
        "A reference to the first batch is not a record of it: if the loader changes that "
        "tensor in place, your reference changes with it. For the run: seed once, before "
        "anything draws; seeding again inside the loop replays the same draw at every step.",
        "Clone every tensor of the first pass, then compare with torch.equal, shapes and "
        "dtypes included. In seeded_overfit call random.seed(seed) and torch.manual_seed(seed) "
        "once at the top, then build the model, take one batch, and loop.",
    ),
    provides=("batch_is_static", "seeded_overfit"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("accepts-static", "It calls a static loader static"),
        CheckSpec("detects-change", "It catches a loader whose batch changes between passes"),
        CheckSpec("same-batch", "Two runs with the same seed take the same batch"),
        CheckSpec("same-losses", "Two runs with the same seed have the same loss at every step"),
        CheckSpec("seed-matters", "A run with another seed is another run"),
        CheckSpec("fresh-randomness", "Dropout still draws a new mask at every step"),
        CheckSpec("one-batch", "Every step trains on the one batch the run took"),
        CheckSpec("trains", "The run trains: the loss on its batch falls"),
    ),
    cases=(
        "a shuffling loader",
        "an augmenting loader",
        "the same tensors every pass",
        "equal copies every pass",
        "a batch changed in place",
        "labels reordered on their own",
        "seeded run A",
        "seeded run B",
    ),
)
