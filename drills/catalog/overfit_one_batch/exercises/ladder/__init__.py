"""Write it: the overfit ladder. overfit_ladder() trains a fresh model on the first 1, then 2,
then 5 examples of a small set and returns the three; the judge measures each one's loss on its
examples from the weights that come back (checks.py), on hidden sets of several widths and
numbers of classes (problem.py)."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="overfit-ladder",
    drill="overfit-one-batch",
    title="Overfit on 1, then 2, then 5 examples",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Each rung is its own small run: a new model, the same few examples at every step, and "
        "a loop that goes on until the loss on those examples is where you want it. What in "
        "an ordinary training loop would get in the way of that?",
        "Three things make a loop look busy and learn nothing here: weights that get no "
        "gradient (no_grad, or eval-only code), a batch that changes from step to step, and "
        "gradients that pile up from one step to the next. And a fixed handful of steps is a "
        "guess, not a check: measure the loss.",
        "For k in 1, 2, 5: model = make_model(); x, y = features[:k], labels[:k]; Adam at 1e-2; "
        "loop: loss = cross_entropy(model(x), y); stop when loss.item() < 0.01; zero_grad, "
        "backward, step. Return {1: ..., 2: ..., 5: ...}.",
    ),
    provides=("overfit_ladder",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec("fits-1", "The loss on 1 example goes to about zero"),
        CheckSpec("fits-2", "The loss on 2 examples goes to about zero"),
        CheckSpec("fits-5", "The loss on 5 examples goes to about zero"),
        CheckSpec("fresh-models", "Each rung trains a fresh model"),
    ),
    cases=("16 features, 4 classes", "10 features, 3 classes", "24 features, 6 classes"),
)
