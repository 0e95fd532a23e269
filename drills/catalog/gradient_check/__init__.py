"""Check a hand-written gradient: a custom backward against finite differences, and a vectorised
masked mean against a plain loop ("write it twice").

Both slips are silent: any tensor of the right shape is accepted as a gradient, and a mean of the
right shape is accepted as a loss. Only computing the same thing a second, plainer way shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.gradient_check.signature import GradientCheckSignature
from drills.catalog.gradient_check.variants import (
    BACKWARDS,
    GRAD_TOLERANCE,
    MASKED_MEANS,
    MEAN_TOLERANCE,
)
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    Observation,
    Reference,
)


class GradientCheck(Drill):
    slug = "gradient-check"
    position = 130
    title = "Check a hand-written gradient"
    summary = (
        "A wrong backward or a wrong mask trains without an error: check each against a second, "
        "plainer computation."
    )
    symptom = (
        "You wrote a custom activation with its own backward, and a vectorised masked loss. "
        "Training runs and nothing crashes. Are they right?"
    )
    scenario = (
        "Two pieces of hand-written tensor code. (a) A SELU activation as a "
        "torch.autograd.Function with a hand-written backward, checked element by element "
        "against central finite differences in float64 (and by torch.autograd.gradcheck), then "
        "used to train a tiny MLP beside torch's own SELU from the same start. (b) A per-row "
        "masked mean over padded rows, vectorised, checked row by row against a plain loop. "
        "Choose which piece carries a slip, predict which numbers will show it (and where), "
        "then run it. A slip of a few percent barely moves a training curve: the checks are "
        "what find it."
    )
    version = "1"
    healthy = "correct"
    signature_type = GradientCheckSignature
    knobs = (
        Knob(
            "backward",
            "choice",
            "correct",
            "The hand-written SELU backward: correct (λ for x > 0, λα·exp(x) for x ≤ 0); "
            "missing-scale (the positive branch returns 1, forgetting λ); flipped-sign (the "
            "negative branch has its sign flipped).",
            choices=BACKWARDS,
        ),
        Knob(
            "masked_mean",
            "choice",
            "correct",
            "The vectorised masked mean: correct (masked sum / real positions); padded-length "
            "((values · mask).mean(dim=1): divides by the padded length); padding-summed "
            "(values.sum(dim=1) / real positions: the padding's values are summed in).",
            choices=MASKED_MEANS,
        ),
        Knob(
            "steps",
            "int",
            150,
            "SGD steps of the tiny MLP trained with the hand-written activation.",
            minimum=10,
            maximum=1000,
        ),
    )
    hypotheses = (
        Hypothesis(
            "correct",
            "Both pieces are right: the backward agrees with finite differences to about 1e-9 "
            "and the vectorised mean equals the loop on every row.",
        ),
        Hypothesis(
            "wrong-backward",
            "The hand-written backward is wrong: its gradient disagrees with finite differences "
            "far beyond rounding, on the inputs of one branch only.",
        ),
        Hypothesis(
            "masking-bug",
            "The vectorised masked mean handles padding wrongly: it matches the loop on full "
            "rows and disagrees on padded ones.",
        ),
        Hypothesis(
            "both-wrong",
            "Both pieces are wrong: the gradient check and the loop comparison both fail.",
        ),
    )
    charts = (
        Chart(
            "relative_error",
            "Gradient check: relative error per input element (sorted by x: negative | positive)",
            ("relative_error",),
            "relative error",
            log_y=True,
            references=(Reference("tolerance", "grad_tolerance"),),
            labels={"relative_error": "relative error"},
        ),
        Chart(
            "loss",
            "Training loss: hand-written backward vs torch's autograd (same start)",
            ("loss", "reference_loss"),
            "MSE",
            log_y=True,
            labels={"loss": "hand-written backward", "reference_loss": "torch autograd"},
        ),
        Chart(
            "row_means",
            "Masked mean per row: loop vs vectorised",
            ("loop_row_mean", "vectorised_row_mean"),
            "mean",
            labels={"loop_row_mean": "loop", "vectorised_row_mean": "vectorised"},
        ),
    )
    observations = (
        Observation("max_grad_error", "Largest relative gradient error", "grad_tolerance"),
        Observation("negative_inputs_error", "Largest relative error where x < 0"),
        Observation("positive_inputs_error", "Largest relative error where x > 0"),
        Observation("worst_input", "Input x at the element with the largest error"),
        Observation("gradcheck_passed", "torch.autograd.gradcheck passed"),
        Observation(
            "final_loss", "Final training loss, hand-written backward", "reference_final_loss"
        ),
        Observation("loss_ratio", "Final loss, hand-written / torch's"),
        Observation("loop_vs_vectorised_max_diff", "Largest |vectorised - loop| over rows"),
        Observation("disagreeing_rows", "Rows where the two means disagree"),
        Observation(
            "padded_rows_disagreeing",
            "Disagreeing rows that are padded",
            "padded_rows",
            reference_for=("masking-bug", "both-wrong"),
        ),
        Observation("full_rows_max_diff", "Largest difference on rows without padding"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        grad_error = signature.get("max_grad_error")
        mean_diff = signature.get("loop_vs_vectorised_max_diff")
        # The tolerances sit far above rounding and far below any real slip: no run is close.
        wrong_backward = grad_error is not None and grad_error > GRAD_TOLERANCE
        wrong_mask = mean_diff is not None and mean_diff > MEAN_TOLERANCE
        if wrong_backward and wrong_mask:
            return "both-wrong"
        if wrong_backward:
            return "wrong-backward"
        if wrong_mask:
            return "masking-bug"
        return "correct"


DRILL = GradientCheck()
