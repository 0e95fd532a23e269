"""What a run of "Check a hand-written gradient" reports (torch-free, so the description can name
it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class GradientCheckSignature(Signature):
    # (a) The hand-written backward against central finite differences, in float64.
    elements_checked: int | None = None
    max_grad_error: float | None = None  # largest relative error over every input element
    grad_tolerance: float | None = None  # what "agrees" means at this precision
    worst_element: int | None = None  # flat index of the element with the largest error
    worst_input: float | None = None  # the input value at that element
    negative_inputs_error: float | None = None  # largest relative error where the input is < 0
    positive_inputs_error: float | None = None  # largest relative error where the input is > 0
    gradcheck_passed: bool | None = None  # torch.autograd.gradcheck's verdict on the same function
    # Training a tiny MLP with the hand-written activation and, from the same start, with torch's.
    initial_loss: float | None = None
    final_loss: float | None = None  # hand-written backward, mean of the last 10% of steps
    reference_final_loss: float | None = None  # torch's own SELU and autograd
    loss_ratio: float | None = None  # final_loss / reference_final_loss
    # (b) "Write it twice": the vectorised masked mean against a plain loop, row by row.
    rows: int | None = None
    padded_rows: int | None = None  # rows shorter than the padded length
    loop_vs_vectorised_max_diff: float | None = None  # largest |vectorised - loop| over rows
    rows_disagreeing: int | None = None  # rows whose two means differ beyond the tolerance
    disagreeing_rows: str | None = None  # which rows, e.g. "1, 3, 4"
    padded_rows_disagreeing: int | None = None  # how many of those are padded rows
    full_rows_max_diff: float | None = None  # largest difference on rows with no padding
