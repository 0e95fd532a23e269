"""Fix the loop: the dashboard's gradient panel drops every parameter's .grad once it has
plotted it (to hand the memory back), and it is called between backward and the step. Each
step finds no gradient, SGD skips every parameter, and the loss only wobbles from batch to batch
around where it started: the drill's "no-step", with a dashboard showing healthy gradients.

Accepted as fixes: the gradients cleared before each backward (optimizer.zero_grad() at the top
of the step, the panel only reading; the reference), the panel moved after the step (dropping
.grad there is clearing it for the next batch), or any loop that takes the same plain SGD steps
(an update written by hand).

Rejected, each by a check that says why (seeds 0-4): the rate raised a hundredfold (no
parameter moves at any rate when the step gets no gradient); the panel zeroing each .grad in
place instead of dropping it (the step runs, on gradients of zeros); optimizer.zero_grad()
called right after backward instead (the same empty step); the clearing line deleted with
nothing in its place (the loss may fall, to 0.45-0.95 of its start, but every step follows the
sum of all the gradients so far, which the two-step replay shows).
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="silent-no-learning-gradient-panel",
    drill="silent-no-learning",
    title="The loop runs, nothing learns: a dashboard full of gradients",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The panel shows a healthy gradient for every layer, and the loss does not move. "
        "Compare a parameter just before and just after optimizer.step(): did it change? Then "
        "print what the optimizer has to work with at that moment.",
        "A step reads each parameter's .grad when it runs, not when backward ran. Follow .grad "
        "from loss.backward() to optimizer.step(), line by line: what happens to it in between?",
        "Let the panel only read the gradients, and clear them where they are no longer needed: "
        "optimizer.zero_grad() before each backward (or the clearing after the step). The judge "
        "replays two steps of plain SGD, so every batch's step must use that batch's gradient "
        "alone.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec("every-parameter-moves", "Over the whole run, every parameter moves"),
        CheckSpec(
            "own-batch-steps",
            "Two steps of the loop are two plain SGD steps at the given rate, each on its own "
            "batch's gradient",
        ),
        CheckSpec(
            "loss-falls", "The training loss of the trained weights ends well below its start"
        ),
    ),
)
