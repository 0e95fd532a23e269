"""Write it: the label audit a causal LM's batch should pass before training: are the labels
shifted exactly once (not zero times, not twice), do padding and prompt count as targets, and
is any row left with nothing to learn. Each hidden batch has its labels built by one of the
drill's label modes, or has rows whose prompt filled the whole window."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="label-audit",
    drill="double-shift-labels",
    title="Audit a causal LM's labels before training",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Take one row and write the input tokens above the labels. For the labels that count, "
        "which input token does each one equal: the one at its own position, the next one, or "
        "the one after that?",
        "Once you know how far ahead the labels point, a label at position t is the token of "
        "position t + shift: padding and prompt are read off the masks at that position, not "
        "at t. And a batch can have targets while one of its rows has none.",
        "For s in 0, 1, 2, compare targets[counted] with input_ids shifted left by s; exactly "
        "one s fits (none when nothing counts). Shift the masks by the same s and look for "
        "counted labels on them; a row without targets is one where nothing counts.",
    ),
    provides=("audit_labels",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("report", "It returns a report in the documented format for every batch"),
        CheckSpec("shift", "It tells labels shifted once from unshifted or twice-shifted ones"),
        CheckSpec("padding", "It says whether padding counts as a target"),
        CheckSpec("prompt", "It says whether prompt tokens count as targets"),
        CheckSpec("empty-rows", "It names every row left with no target"),
    ),
    cases=(
        "shifted once",
        "not shifted",
        "shifted twice",
        "padding counted",
        "prompt counted",
        "rows with nothing to learn",
        "everything masked",
    ),
)
