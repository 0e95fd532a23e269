"""What a run of "Padding masks" reports (torch-free, so the description can name it).

Two measurements, one per mask. Which positions the loss counts is read from autograd: a
position counts when the logged loss has a gradient with respect to its logits. What the
attention mask does is read by running the same held-out sequences twice with the trained
model: padded as the loop pads them, and each one alone with no padding at all (the reference).
Where padding is kept out of attention, a real token's output is the same both ways.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class PaddingSignature(Signature):
    pad_to: int | None = None  # positions per padded sequence
    # Share of the training batches' positions that hold a real token (closed form: the mean
    # length over pad_to; measured here over the batches the run drew)
    real_share: float | None = None
    # First step, from autograd: positions whose logits the logged loss has a gradient for
    counted_positions: int | None = None
    counted_padding: int | None = None  # how many of them are padding
    counted_padding_share: float | None = None  # counted_padding / counted_positions
    # Tail means (the last 10% of steps), on the training batches, from the same logits:
    logged_loss: float | None = None  # the loss the loop averages, backpropagates and logs
    real_token_loss: float | None = None  # cross-entropy averaged over the real tokens only
    padding_loss: float | None = None  # cross-entropy averaged over the padding positions only
    logged_over_real: float | None = None  # logged_loss / real_token_loss
    first_logged_loss: float | None = None  # the first step's logged loss
    first_real_token_loss: float | None = None
    # The held-out sequences, real tokens only, with the weights the run started from: what the
    # code lets padding do before training can learn to give it more or less weight
    first_output_shift: float | None = None  # max |logit padded - logit alone|
    # The same with the trained model:
    output_shift: float | None = None  # max |logit padded - logit unpadded| over real tokens
    held_out_loss_padded: float | None = None  # padded to pad_to, as the loop pads
    held_out_loss_unpadded: float | None = None  # each sequence alone, no padding
    loss_shift: float | None = None  # held_out_loss_padded - held_out_loss_unpadded
    held_out_accuracy: float | None = None  # real tokens labelled right, unpadded
    steps_run: int | None = None
    nonfinite_step: int | None = None
