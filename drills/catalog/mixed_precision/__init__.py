"""Mixed precision: float16 autocast with a gradient scaler, and how it goes quietly wrong.

Under autocast the matrix products run in float16, whose largest number is 65504 and whose
smallest normal one is about 6e-5. GradScaler multiplies the loss by a scale before backward, so
that small gradients do not round to zero, and divides the gradients by it again (unscale_)
before the optimizer uses them. If any gradient came out inf or NaN, scaler.step skips the
optimizer step and scaler.update halves the scale. A scale far too large overflows at every
step: each step is skipped and halves it, the weights do not move, and the loss the loop logs
stays an ordinary number that simply does not fall, until the scale has come down far enough.
And any code that reads .grad between backward and unscale_ sees the gradient times the scale:
a logged norm the scale times too large, and clipping at norm 1 that cuts every step to 1/scale
of its size (to 1/(scale x norm) where the true norm is below 1). A float32 twin set to the same
weights, taking the same step on the same batch, shows both: a skipped step moves nothing, a
clipped scaled step is the twin's divided by the scale.

Measured on this torch (2.13, CPU) before building on it: under torch.autocast("cpu",
dtype=torch.float16) nn.Linear returns float16 while its weights stay float32, and
torch.amp.GradScaler("cpu") finds the inf, leaves the weights bit for bit as they were and
halves its scale, as on a GPU; the drill uses both as they are (a test checks them). bfloat16
autocast works too, but with float32's range: at a scale of 2^64 its gradients stay finite and
nothing is skipped, so it would not show the overflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.mixed_precision.reading import diagnose as read_run
from drills.catalog.mixed_precision.signature import MixedPrecisionSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
)

PRECISIONS = ("float16", "float32")
UNSCALES = ("first", "late")
CLIPS = ("on", "off")
SCALE_POWERS = (10, 16, 20, 32, 48, 64)


class MixedPrecision(Drill):
    slug = "mixed-precision"
    position = 75
    title = "Mixed precision"
    summary = (
        "Train in float16 with a gradient scaler, and check each step against float32's: "
        "taken, skipped, or cut down by the scale?"
    )
    symptom = (
        "The loop was moved to float16 autocast with a gradient scaler to save memory. The "
        "logged loss looks like any other run's, but it has stopped falling; in float32 the "
        "same loop trained."
    )
    scenario = (
        "A small MLP (8 inputs, 32 tanh units) fits a smooth regression, 512 examples, with "
        "plain SGD on batches of 32, under torch.autocast in float16 with torch.amp."
        "GradScaler. Beside it a float32 twin, set to the same weights before every step, "
        "takes the step the loop means to take on the same batch. Choose the scaler's first "
        "scale, where the loop unscales, whether it clips, predict what the scaler and the "
        "steps will do, then run it."
    )
    version = "1"
    healthy = "healthy"
    signature_type = MixedPrecisionSignature
    knobs = (
        Knob(
            "precision",
            "choice",
            "float16",
            "float16: the forward pass under torch.autocast in float16, backward on the loss "
            "times the scaler's scale; float32: no autocast, and the scaler disabled (its "
            "scale is 1, it never skips).",
            choices=PRECISIONS,
        ),
        Knob(
            "unscale",
            "choice",
            "first",
            "Where the loop calls scaler.unscale_(optimizer): first (right after backward, "
            "before it reads or clips .grad); late (after it has read and clipped .grad, "
            "which then still holds the gradient times the scale).",
            choices=UNSCALES,
        ),
        Knob(
            "clip",
            "choice",
            "on",
            "on: clip_grad_norm_ at max_norm 1 and log the norm it returns; off: no clipping, "
            "the loop only measures the norm for its log.",
            choices=CLIPS,
        ),
        Knob(
            "init_scale_power",
            "int",
            10,
            "The scaler's first scale is 2 to this power: 10 is 1024, 16 is GradScaler's "
            "default of 65536. After every skipped step it halves.",
            choices=SCALE_POWERS,
        ),
        Knob(
            "lr",
            "float",
            0.2,
            "Plain SGD learning rate.",
            minimum=1e-3,
            maximum=10.0,
            log_scale=True,
        ),
        Knob("steps", "int", 50, "Optimizer steps.", minimum=1, maximum=200),
    )
    hypotheses = (
        Hypothesis(
            "healthy",
            "The scaler works: every step it takes is the float32 twin's step to float16 "
            "rounding, the norm the loop logs is the true one, at most a fifth of the steps "
            "were skipped (the scale coming down to a level the gradients fit at), and the "
            "loss falls to half its first value or less.",
        ),
        Hypothesis(
            "overflow-skips",
            "The scale is far too large: the scaled gradients overflow float16 to inf, so the "
            "scaler skips the step and halves the scale, and the weights stay bit for bit as "
            "they were. Half the steps or more were skipped: over them the loss curve is "
            "flat, though every logged value is an ordinary number.",
        ),
        Hypothesis(
            "clipped-scaled",
            "The loop clips before it unscales: clipping sees the gradient times the scale and "
            "cuts it to norm 1, and the unscale then divides it by the scale. Each step points "
            "the right way but is the twin's divided by the scale (by the scale times the "
            "norm, where the true norm is below 1): a thousand times too small or more. The "
            "weights move, just that much too slowly.",
        ),
        Hypothesis(
            "norm-read-scaled",
            "The steps are right (each one the float32 twin's), but the loop reads the "
            "gradient norm before unscaling: the norm it logs is the true one times the "
            "scale. Nothing is wrong with the steps, only with what the log says.",
        ),
        Hypothesis(
            "diverges",
            "The loss blew up (to 10 times its first value or more, or to a number that is not "
            "finite): the learning rate is too large for this problem, whatever the scaler "
            "does. In float16 the growing gradients overflow too, so the scaler skips and "
            "halves on the way up; the float32 run blows up as well.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet. Either between a fifth and half of the steps were skipped (on "
            "the line: a longer run tells whether the scale settles); or the step is neither "
            "the twin's nor the twin's divided by the scale; or the steps are the twin's but "
            "the loss has fallen by less than half (too small a rate or too few steps).",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Loss: the batch the loop logs, the whole training set, and the same loop in float32",
            ("loss", "set_loss", "float32_set_loss"),
            "mean squared error",
            log_y=True,
            labels={
                "loss": "logged batch loss",
                "set_loss": "whole training set",
                "float32_set_loss": "whole training set, float32 run",
            },
        ),
        Chart(
            "scale",
            "The scaler's scale at each step (get_scale())",
            ("scale",),
            "scale",
            log_y=True,
            labels={"scale": "loss scale"},
        ),
        Chart(
            "skipped_steps",
            "Steps that left every weight bit for bit unchanged, counted",
            ("skipped_steps",),
            "skipped steps so far",
            labels={"skipped_steps": "skipped steps"},
        ),
        Chart(
            "update_ratio",
            "Each step the weights took against the float32 twin's",
            ("update_ratio",),
            "||step|| / ||float32 step||",
            log_y=True,
            labels={"update_ratio": "step / float32 step"},
        ),
        Chart(
            "grad_norm",
            "Gradient norm: as the loop logs it, and the float32 twin's",
            ("grad_norm", "float32_grad_norm"),
            "L2 norm",
            log_y=True,
            labels={"grad_norm": "logged by the loop", "float32_grad_norm": "float32 twin"},
        ),
    )
    observations = (
        Observation("initial_scale", "The scaler's scale before the first step"),
        Observation("final_scale", "Its scale after the last step"),
        Observation("skipped_steps", "Steps that left every weight unchanged"),
        Observation("skipped_share", "Share of the run's steps skipped"),
        Observation("skips_without_halving", "Skipped steps after which the scale did not halve"),
        Observation("first_taken_step", "First step after which the weights had moved"),
        Observation("step_scale", "At that step: the scale"),
        Observation(
            "update_ratio",
            "At that step: ||step|| / ||float32 twin's step||",
            "scaled_clip_ratio",
            reference_for=("clipped-scaled",),
        ),
        Observation("update_cosine", "At that step: cosine between the two steps"),
        Observation("scaled_grad_norm", "At that step: gradient norm before unscale_"),
        Observation("unscaled_grad_norm", "At that step: gradient norm after unscale_"),
        Observation("float32_grad_norm", "At that step: the float32 twin's gradient norm"),
        Observation("logged_grad_norm", "At that step: the norm the loop logged"),
        Observation(
            "norm_ratio",
            "At that step: logged norm / float32 norm",
            "step_scale",
            reference_for=("norm-read-scaled", "clipped-scaled"),
        ),
        Observation("grad_relative_diff", "At that step: relative difference of the gradients"),
        Observation("initial_loss", "Training-set loss before the first step"),
        Observation(
            "final_loss",
            "Final training-set loss (mean of the last 10% of steps)",
            "float32_final_loss",
        ),
        Observation("nonfinite_step", "First step whose loss was not finite"),
    )
    numeric_predictions = (
        NumericPrediction(
            "norm_ratio",
            "How many times the float32 gradient's norm will the norm the loop logs be?",
            "times the float32 norm",
            "Backward ran on the loss times the scale; ask what .grad holds at the moment the "
            "loop reads it, before or after unscale_.",
            reported_as="the logged norm was",
            relative_band=0.02,
            absolute_band=0.02,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        return read_run(signature, error)


DRILL = MixedPrecision()
