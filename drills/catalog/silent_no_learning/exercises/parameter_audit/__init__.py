"""Write it: the per-parameter audit of one backward: for each named parameter, does it require
a gradient, does the optimizer hold it, what state is its gradient in, and how large is it. The
hidden runs break one link each (a cut graph, a frozen layer, a part left out of the optimizer,
a NaN gradient, gradients zeroed in place) and one is healthy."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="parameter-audit",
    drill="silent-no-learning",
    title="Audit every parameter after backward",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Four questions per parameter, and each has its own place to look: the parameter "
        "itself, the optimizer, and the parameter's .grad. Which of them can a gradient that "
        "is there but useless slip past?",
        "An optimizer can hold its tensors in more than one param group, and it holds tensors, "
        "not names: compare by identity. A .grad that is not None can still be all zeros, or "
        "hold a NaN somewhere.",
        "Collect id(p) for every p of every group in optimizer.param_groups. Per parameter: "
        "grad is None -> 'none'; not torch.isfinite(grad).all() -> 'non-finite'; the norm is "
        "0 -> 'zero'; else 'finite'. Read everything, change nothing.",
    ),
    provides=("audit",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The model's weights come back whole (every tensor, finite)"),
        CheckSpec("rows", "It returns one row per named parameter, in the documented format"),
        CheckSpec("requires-grad", "It says which parameters require a gradient"),
        CheckSpec("in-optimizer", "It says which parameters the optimizer holds"),
        CheckSpec(
            "grad-state",
            "It tells a missing gradient, a zero one, a finite one and a non-finite one apart",
        ),
        CheckSpec("grad-norm", "It measures each gradient's norm (None where there is none)"),
        CheckSpec("leaves-model-alone", "It changes no weight and no gradient"),
    ),
    cases=(
        "healthy model",
        "detached layer",
        "frozen layer",
        "left out of the optimizer",
        "NaN gradient",
        "gradients zeroed, layer detached",
    ),
)
