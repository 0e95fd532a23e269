"""Fix the loop: float16 autocast with a GradScaler, and the gradient clipped to norm 1 while
.grad still holds the gradient times the scale. Clipping cuts it to norm 1, the scaler then
divides by the scale, and every step is 1/scale of float32's: the weights hardly move, while
the logged loss and norm look ordinary and no step is skipped.

Accepted as fixes: scaler.unscale_(optimizer) before clipping (the reference), clipping by hand
after it, or clipping the scaled gradients at max_norm times scaler.get_scale(). The last
clips the same gradients to the same size (||s g|| > s M exactly when ||g|| > M) and the judge
measures steps; it is the more fragile fix, since the norm it returns, and any norm logged, is
still the scale times too large; the hints lead to unscale_. A threshold times a number
written by hand (1024) is right at that scale only: the hidden runs use others.

The judge's three hidden runs (problem.py): the drill's problem at a first scale of 2^10; a
head started near zero on one large batch, at 2^13, whose hidden-layer gradients float16 loses
without the scale (a loop that drops the scaler steps 19-37% off float32 on its worst parameter
there, on seeds 0-4); and the drill's problem at 2^24, whose first scaled gradients overflow,
so the step must be skipped and the scale brought down before training.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="mixed-precision-float32-step",
    drill="mixed-precision",
    title="Mixed precision: the loop that stopped learning",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The curve is not where this shows. Take one step of your loop and one step of the "
        "same loop in float32, from the same weights on the same batch: how far does each "
        "move the weights?",
        "Between backward and scaler.step, what does .grad hold under a GradScaler? Ask what "
        "the clipping sees there, and what is left of the step once the scaler has divided it.",
        "Call scaler.unscale_(optimizer) right after backward, then clip. scaler.step knows "
        "the gradients are unscaled already. Keep the scaler: the judge runs cases where "
        "float16 needs it, and one where it must skip a step.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "float32-step",
            "From the same weights and batch, each parameter moves as the same loop moves it "
            "in float32",
        ),
        CheckSpec(
            "skips-overflow",
            "A step whose scaled gradients overflow float16 leaves every weight as it was",
        ),
        CheckSpec("trains", "In 50 steps the training loss falls to half its first value"),
    ),
    cases=("scale 2^10", "quiet head, scale 2^13", "scale 2^24"),
)
