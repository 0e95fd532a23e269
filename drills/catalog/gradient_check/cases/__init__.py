"""Cases on the gradient-check drill: hand-written tensor code that trains without an error.
Finite differences, torch's gradcheck, a run beside torch's own activation and a plain loop
written a second time tell which piece (if any) is wrong, and where."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart

GRAD_TOLERANCE = 1e-6  # the drill's own: rounding sits near 1e-9, a slip orders above
MEAN_TOLERANCE = 1e-9
TRACKS_WITHIN = 1.1  # a final loss within 10% of the reference run tracks it


def branch_errors(signature: Mapping[str, Any], error: str | None) -> str:
    """Finite differences against the backward, on negative and positive inputs separately."""
    negative = (signature.get("negative_inputs_error") or 0.0) > GRAD_TOLERANCE
    positive = (signature.get("positive_inputs_error") or 0.0) > GRAD_TOLERANCE
    if negative and positive:
        return "both-branches-off"
    if negative:
        return "negative-branch-off"
    if positive:
        return "positive-branch-off"
    return "agrees-everywhere"


def gradcheck_verdict(signature: Mapping[str, Any], error: str | None) -> str:
    return "passes" if signature.get("gradcheck_passed") else "fails"


def beside_reference(signature: Mapping[str, Any], error: str | None) -> str:
    ratio = signature.get("loss_ratio")
    if ratio is None:
        return "no-comparison"
    return "tracks-reference" if ratio < TRACKS_WITHIN else "lags-reference"


def loop_agreement(signature: Mapping[str, Any], error: str | None) -> str:
    diff = signature.get("loop_vs_vectorised_max_diff")
    if diff is None:
        return "no-comparison"
    return "rows-disagree" if diff > MEAN_TOLERANCE else "every-row-agrees"


CASE_SET = CaseSet(
    drill="gradient-check",
    causes=(
        Cause(
            "code-is-right",
            "healthy",
            "Nothing is wrong: the backward and the masked mean are both right.",
            {"backward": "correct", "masked_mean": "correct"},
            "correct",
            fix="change-nothing",
        ),
        Cause(
            "positive-branch-unscaled",
            "gradients",
            "The backward's positive branch returns 1 instead of λ: every gradient there is "
            "about 5% too small.",
            {"backward": "missing-scale"},
            "wrong-backward",
            fix="restore-scale",
        ),
        Cause(
            "negative-branch-sign",
            "gradients",
            "The backward's negative branch has its sign flipped: gradients there point the "
            "wrong way.",
            {"backward": "flipped-sign"},
            "wrong-backward",
            fix="restore-sign",
        ),
        Cause(
            "mean-over-padding",
            "loss",
            "The vectorised masked mean divides the masked sum by the padded length instead "
            "of the number of real positions.",
            {"masked_mean": "padded-length"},
            "masking-bug",
            fix="divide-by-real-count",
        ),
    ),
    experiments=(
        Experiment(
            "finite-differences-by-sign",
            "Finite differences, split by the sign of x",
            "Compare the backward with central differences in float64, element by element, "
            "and report the worst relative error on negative and on positive inputs.",
            shows=("numbers",),
            observations=("negative_inputs_error", "positive_inputs_error", "worst_input"),
            reading=branch_errors,
        ),
        Experiment(
            "torch-gradcheck",
            "Run torch.autograd.gradcheck",
            "Hand the activation to torch's own finite-difference check at the same point.",
            shows=("numbers",),
            observations=("gradcheck_passed",),
            reading=gradcheck_verdict,
        ),
        Experiment(
            "beside-builtin",
            "Train beside the built-in activation",
            "Train the same tiny network from the same start with torch's own SELU and compare "
            "where the two losses end.",
            shows=("numbers",),
            observations=("final_loss", "reference_final_loss", "loss_ratio"),
            reading=beside_reference,
        ),
        Experiment(
            "write-it-twice",
            "Write the mean a second time as a loop",
            "Compute each row's mean with a plain loop over its real positions and compare "
            "it with the vectorised result.",
            shows=("numbers",),
            observations=("loop_vs_vectorised_max_diff", "rows_disagreeing", "padded_rows"),
            reading=loop_agreement,
        ),
        Experiment(
            "both-check-tables",
            "Both checks, element by element and row by row",
            "Read the worst gradient elements and the row-by-row comparison tables together.",
            shows=("tables",),
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: both pieces are right.", Change()),
        Fix(
            "restore-scale",
            "Return λ, not 1, for the positive branch of the backward.",
            Change(replace={"backward": {"missing-scale": "correct"}}),
        ),
        Fix(
            "restore-sign",
            "Restore the sign of λα·exp(x) on the negative branch of the backward.",
            Change(replace={"backward": {"flipped-sign": "correct"}}),
        ),
        Fix(
            "divide-by-real-count",
            "Divide the masked sum by the number of real positions, mask.sum(dim=1).",
            Change(replace={"masked_mean": {"padded-length": "correct"}}),
        ),
        Fix(
            "train-longer",
            "Train twice as long so that the network catches up with the reference.",
            Change(scale={"steps": 2}),
        ),
        Fix(
            "smaller-finite-difference-step",
            "Use a smaller finite-difference step: the disagreement is rounding noise.",
            Change(),  # the check is not the drill's knob; a real slip does not shrink with h
        ),
    ),
    # Only the run with your code: the built-in activation's run beside it is an experiment
    # (beside-builtin). Drawn on the first screen, the two curves gave the flipped sign away:
    # its loss ends 20-70% above the built-in one's, a sound backward's within 5%.
    charts=(ShownChart("Training loss", "MSE", {"loss": "training loss"}, log_y=True),),
    # Long enough that a slip in the negative branch ends as low as a sound activation does on
    # a shorter run: where the curve ends cannot tell them apart.
    nuisance={"steps": (300, 350, 400)},
    symptom_observations=("final_loss",),
)

CASES = (
    Case(
        "a-custom-activation",
        "A custom activation before review",
        "You wrote a custom activation with its own backward to save memory, and a tiny network "
        "trained with it brings its loss down. A reviewer still refuses to merge it without "
        "evidence that it is right.",
        CASE_SET,
        causes=("positive-branch-unscaled", "negative-branch-sign", "code-is-right"),
    ),
    Case(
        "a-vectorised-average",
        "A vectorised masked average",
        "Beside a custom activation, you replaced a per-sequence loop with one vectorised line "
        "that averages each padded sequence's loss. Training runs to the end and its loss comes "
        "down. Is it safe to merge?",
        CASE_SET,
        causes=("mean-over-padding", "code-is-right", "positive-branch-unscaled"),
    ),
    Case(
        "ready-to-merge",
        "Two pieces of code before review",
        "Before merging a custom activation and a vectorised masked average, you train a tiny "
        "network with them, and its loss comes down. Is anything wrong?",
        CASE_SET,
        causes=("code-is-right", "mean-over-padding", "negative-branch-sign"),
    ),
)
