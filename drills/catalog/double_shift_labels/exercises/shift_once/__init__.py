"""Write it: the label preparation for a causal LM whose loss already shifts, as Hugging Face's
do. The starter is a draft ported from a model that did not shift: it shifts too, so every
label points two tokens ahead."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="labels-shift-once",
    drill="double-shift-labels",
    title="Labels for a model that shifts them itself",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Write out, for one short sequence, which token the logit at each position is scored "
        "against once the model has done its own shifting. Is it the next token?",
        "The model already pairs position t with labels[t + 1]. Anything your function does "
        "to move tokens sideways happens on top of that.",
        "Start from a copy of input_ids, leave every token where it is, and only mark with "
        "-100 the positions that must not count: padding and the prompt.",
    ),
    provides=("prepare_labels",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "labels-aligned",
            "On hidden batches, every label is the one this model needs, with padding and "
            "prompt masked",
        ),
        CheckSpec("batch-untouched", "prepare_labels leaves the batch it is handed as it was"),
        CheckSpec(
            "loss-at-entropy",
            "A model trained with your labels predicts the next response letter as well as "
            "the text allows",
        ),
    ),
)
