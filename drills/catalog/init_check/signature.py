"""What a run of "Check the initialisation" reports (torch-free, so the description can name it).

Most numbers are read at step 0, before any update: they depend on the initialisation and the
data only, not on the learning rate, which is what makes them an init check.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class InitSignature(Signature):
    classes: int | None = None
    chance_loss: float | None = None  # ln(classes): the loss of a model that knows nothing
    # TOO_LARGE_RATIO x ln(classes): a first loss from here up reads as a too-large start
    too_large_loss: float | None = None
    initial_loss: float | None = None  # the loss at step 0
    initial_loss_ratio: float | None = None  # initial_loss / chance_loss: about 1 when healthy
    initial_logit_size: float | None = None  # mean |logit| at step 0
    initial_saturated_share: float | None = None  # examples whose top class has p > 0.99 at step 0
    initial_dead_share: float | None = None  # most dead units in any hidden layer at step 0
    deadest_layer: str | None = None  # the hidden layer with that share (None if none is dead)
    layers_without_gradient: int | None = None  # layers whose gradient is exactly 0 at step 0
    initial_first_grad: float | None = None  # gradient norm of the first layer at step 0
    initial_last_grad: float | None = None  # gradient norm of the output layer at step 0
    steps_run: int | None = None
    final_loss: float | None = None  # mean of the last 10% of steps
    max_loss: float | None = None  # the highest loss of the run (a blow-up can fall back)
    nonfinite_step: int | None = None  # first step whose loss or gradient was not finite
