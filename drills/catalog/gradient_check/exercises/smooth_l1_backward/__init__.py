"""Fix the backward: a masked smooth L1 loss (per log over its real steps, then over the logs
that have any) written as a torch.autograd.Function, whose hand-written backward has two slips
that its gradcheck self-test cannot see, because it runs at beta = 1 on a full mask: the
quadratic part's slope is x where it is x / beta, and padded steps (every step of a log with no
real one too) get a gradient although the forward masked them out. The loop trains, its loss
falls, and it ends 1.2 to 1.9 times the held-out loss the true gradient trains to.

Accepted as fixes: any backward whose gradient is the loss's own, wherever the judge probes it:
the slope x / beta below beta times the mask (the reference), a clamp of x / beta to [-1, 1]
with weights worked out in the forward, or autograd of the plain loss recomputed inside the
backward. Wrong fixes the judge names: the mask put back with the quadratic part left at x (right
at beta = 1 only, and its training looks fine), the slope written clamp(x, -1, 1) (smooth L1's
gradient at beta = 1), counts no longer clamped (NaN on a log with no real step), the mean over
logs left out of the backward (the gradient times the number of logs: under Adam it trains the
same, but it is not the gradient), and a backward of zeros (no padded step is given anything,
and nothing learns).
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="gradient-check-smooth-l1-backward",
    drill="gradient-check",
    title="Check a hand-written gradient: the backward its gradcheck passed",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The self-test passes: look at what it feeds gradcheck. Give it what the loop really "
        "sees (beta = 0.25, padded steps, a log without a single reading) and run it again, then "
        "compare your backward's gradient with autograd's on the loss written plainly.",
        "Compare the two gradients in groups: real steps with |pred - target| below beta, real "
        "steps above it, and padded steps. For each group where they differ, take the derivative "
        "of that part of the forward by hand, beta included, and ask whether the forward's loss "
        "depends on those steps at all.",
        "Below beta the loss is 0.5 x^2 / beta, whose slope is x / beta, not x; and the forward "
        "multiplied every step by the mask, so the backward must too: "
        "slope * mask / counts.clamp_min(1)[:, None] / logs. Keep the clamps: a log with no "
        "real step gets 0, not NaN.",
    ),
    provides=("MaskedSmoothL1", "train"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "loss-value",
            "On inputs the judge chooses (other shapes and betas, padding, logs with no real "
            "step), MaskedSmoothL1 returns the masked smooth L1 that float64 gives",
        ),
        CheckSpec(
            "gradient-real",
            "At every real step, below beta, above it and right next to it, at several betas, "
            "your backward gives pred the loss's own gradient",
        ),
        CheckSpec(
            "gradient-padding",
            "Every padded step, and every step of a log with no real step, gets a gradient of "
            "exactly 0",
        ),
        CheckSpec(
            "learns",
            "Trained by your loop from the judge's weights, the model ends within 10% of the "
            "held-out loss the same loop reaches following the loss's true gradient",
        ),
    ),
    cases=("run A", "run B"),
)
