"""What a run of "Validation below training" reports (torch-free, so the description can name it).

The three losses are means over the last epochs (`last_epochs` of the config), where the cosine
schedule has nearly stopped the weights and the curves are read side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class ValBelowTrainSignature(Signature):
    epochs: int | None = None
    train_examples: int | None = None  # rows of the training set
    distinct_examples: int | None = None  # different examples among those rows
    val_file_rows: int | None = None  # rows of the validation file, before its loader
    duplicates_found: int | None = None  # validation rows found, bit for bit, among training's
    # Two eval-mode passes over the validation set give the same loss, bit for bit: false when
    # dropout or noise ignores eval mode.
    eval_repeatable: bool | None = None
    val_examples: int | None = None
    online_train_loss: float | None = None  # mean of each epoch's batch losses, as logged
    train_eval_loss: float | None = None  # the training set re-scored in eval mode
    val_loss: float | None = None  # the validation set, in the mode validation ran in
    online_gap: float | None = None  # online minus re-scored training loss
    val_gap: float | None = None  # validation minus re-scored training loss
    val_below_online: float | None = None  # online training minus validation loss
    val_spread: float | None = None  # epoch-to-epoch wobble of validation around its trend
    train_eval_spread: float | None = None  # ... and of the re-scored training loss
    learned_share: float | None = None  # 0: no better than guessing, 1: as good as the teacher
    noise_floor: float | None = None  # the teacher's own expected loss on the validation set
    train_noise_floor: float | None = None  # ... and on the training set
    chance_loss: float | None = None  # ln(classes): guessing uniformly
