"""What a run of "Double-shifted labels" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class DoubleShiftSignature(Signature):
    targets_counted: int | None = None  # labels that count in the first batch's loss
    prompt_share: float | None = None  # share of the counted real tokens that are prompt letters
    pad_share: float | None = None  # share of the counted labels that are PAD
    steps_run: int | None = None
    initial_loss: float | None = None
    final_loss: float | None = None  # the loss as trained, mean of the last 10% of steps
    second_half_drop: float | None = None  # 1 - final loss / loss around mid-run
    real_token_loss: float | None = None  # PAD labels left out
    response_loss: float | None = None  # response letters only
    next_token_entropy: float | None = None  # the floor of a correctly built model: ln 2
    two_step_entropy: float | None = None  # the floor one token further ahead
    # The floor of a label the model can already see (its own input, or a later token the
    # unmasked attention reads): 0, what copying and seeing the future imply.
    seen_token_entropy: float | None = None
    chance_loss: float | None = None  # ln(vocab): a model that knows nothing
    weight_change: float | None = None  # ||final - initial|| / ||initial||
    nonfinite_step: int | None = None
    raw_loss_finite: bool | None = None  # all-masked: is the 0/0 loss finite?
    # Added with the "unmasked" attention variant, which copies like "no-shift" does:
    labels_equal_inputs: float | None = None  # counted labels that are their own position's input
    future_influence: float | None = None  # nats the early predictions move if later tokens change
    # Added with the coin-flip text, where two positions ahead costs no more than one: how many
    # positions after its own the counted labels sit (0 copied, 1 shifted once, 2 twice).
    label_offset: int | None = None
