"""How a run of "Validation below training" is read: which of its hypotheses the numbers say.

Every reading is made against the training loss re-scored in eval mode, except the two that
make that curve meaningless: randomness built into the model (it carries the noise too) and a
validation set found among the training rows (it measures the training set again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Thresholds diagnose() reads the numbers with. Gaps are relative to the eval-mode training loss.
UNDERFIT_BELOW = 1 / 3  # the model removed under a third of the loss there was to remove
GAP_BAND = 0.15  # curves within 15% of the eval-mode training loss count as lying together
# The weights improve during an epoch, so even with nothing random on the logged loss sits a
# little above the re-scored one: 0.0005-0.0017 nats on seeds 0-4, every data setting. A lift
# over 0.005 nats is something random switched on (dropout 0.005 already adds about that much).
DRIFT_NATS = 0.005
# Two independent sets of this task differ by up to 6% of the loss (validation against the
# re-scored training loss, nothing random on, seeds 0-4): validation counts as below the logged
# curve when it sits more than 8% of the loss under it.
BELOW_LOGGED = 0.08
# Validation wobbling 3x more than the eval-mode training curve is measurement noise...
NOISY_RATIO = 3.0
NOISY_FLOOR = 0.002  # ...and by more than this many nats, so two flat curves never count as noisy


def diagnose(signature: Mapping[str, Any], error: str | None) -> str:
    """The hypothesis a run's numbers read as (ValBelowTrain.hypotheses)."""
    online = signature.get("online_train_loss")
    train_eval = signature.get("train_eval_loss")
    val = signature.get("val_loss")
    if online is None or train_eval is None or val is None:
        return "underfit"  # no numbers: nothing was learned that we could see
    if signature.get("eval_repeatable") is False:
        # Every curve carries the randomness, the re-scored training loss too, so none of
        # the readings below (all made against that curve) holds.
        return "randomness-built-in"
    if signature.get("duplicates_found"):
        # Validation measures the training set again: no reading of where it sits holds.
        return "val-leaks"
    learned = signature.get("learned_share")
    if learned is not None and learned < UNDERFIT_BELOW:
        return "underfit"
    band = GAP_BAND * train_eval
    lift = online - train_eval  # what dropout and noise add to the logged loss
    if val - train_eval > band:
        # Validated in train mode, validation pays what the logged loss pays (it sits with
        # it) and draws new masks every pass (it wobbles); a model that memorised its
        # training set leaves validation above both, on a steady curve or a rising one.
        val_spread = signature.get("val_spread") or 0.0
        steady_spread = signature.get("train_eval_spread") or 0.0
        noisy = val_spread > max(NOISY_RATIO * steady_spread, NOISY_FLOOR)
        if noisy and abs(val - online) <= band and lift > DRIFT_NATS:
            # Validation wobbles with the logged loss: not memorising, whatever the lift.
            return "val-in-train-mode" if lift > band else "inconclusive"
        return "overfits"
    if train_eval - val > band:
        return "val-easier"
    if lift <= DRIFT_NATS:
        return "no-gap"  # only the drift of the weights within an epoch
    if lift > band and online - val > BELOW_LOGGED * train_eval:
        return "train-noise"
    # Something random is on, but too little to show validation clearly below the logged
    # curve because of it (a lift under the band, or validation level with the logged loss).
    return "inconclusive"
