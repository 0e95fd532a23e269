"""Write it: the update probe: how far one optimizer step moves a parameter, relative to its
size (||Δθ|| / ||θ||). The hidden runs differ in optimizer and learning rate; in one the
optimizer does not hold the parameter (it cannot move: 0), in one the parameter starts at zero
(the ratio is undefined: None)."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="relative-update",
    drill="optimizer-membership",
    title="Measure how far one step moves a parameter",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "A gradient is what backward computed; an update is what the optimizer did with it. "
        "Only one of them can be read after the step, by comparing the parameter with what "
        "it was.",
        "optimizer.step() changes the parameter in place. A 'before' that shares the "
        "parameter's storage changes with it, and so measures nothing.",
        "before = p.detach().clone(); optimizer.step(); then ||p - before|| / ||before||, "
        "returning None when ||before|| is 0. Step exactly once and leave .grad as it is.",
    ),
    provides=("relative_update",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The model's weights come back whole (every tensor, finite)"),
        CheckSpec("one-step", "It takes exactly one optimizer step with the gradients it found"),
        CheckSpec("ratio", "It returns ||Δθ|| / ||θ|| of the named parameter across that step"),
        CheckSpec("not-held", "For a parameter the optimizer does not hold, it returns 0"),
        CheckSpec("zero-norm", "For a parameter at zero, it returns None, as documented"),
    ),
    cases=(
        "plain SGD",
        "Adam, a few steps in",
        "SGD with momentum and weight decay, a few steps in",
        "a parameter the optimizer does not hold",
        "a parameter at zero",
    ),
)
