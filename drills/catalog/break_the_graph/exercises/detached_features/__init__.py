"""Fix the loop: the backbone's output is detached before the head reads it, so the backbone
gets no gradient and never moves while the head learns on frozen random features."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="graph-detached-features",
    drill="break-the-graph",
    title="Break the graph: half a model learning",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The loss falls, then stalls well above zero. Which parameters changed during "
        "training? Compare each one before and after, layer by layer.",
        "The backbone's weights end exactly where they started. Backward only reaches what "
        "the loss was computed from: follow the tensor the head reads back to the backbone, "
        "and check its grad_fn on the way.",
        "Keep a detached copy for the dashboard if you like, but feed the head the tensor that "
        "still belongs to the graph.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec("every-layer-learns", "Every parameter gets a gradient and moves"),
        CheckSpec("loss-falls", "The loss on the batch goes to about zero"),
    ),
)
