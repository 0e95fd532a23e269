"""Fix the loop: the new task's head is put on the model after the optimizer was built, so the
optimizer holds the old head's tensors and the live head never moves."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="optimizer-new-head",
    drill="optimizer-membership",
    title="Optimizer membership: a new head that never learns",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Gradients and updates are different things. Does the new head get a gradient? Does "
        "it change after optimizer.step()? Compare it before and after one step.",
        "An optimizer keeps references to the tensors it was given when it was built. Which "
        "tensors were those, and is the new head among them?",
        "Put the new head on the model first, then build the optimizer from model.parameters(), "
        "so it holds the tensors the model actually uses.",
    ),
    provides=("fine_tune",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec(
            "weights",
            "The trained weights come back whole, with the new 4-class head on the model",
        ),
        CheckSpec("new-head-learns", "The new head's parameters move"),
        CheckSpec("backbone-learns", "The backbone's parameters move"),
        CheckSpec("loss-falls", "The loss on the batch goes to about zero"),
    ),
)
