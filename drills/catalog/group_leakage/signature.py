"""What a run of "Group and near-copy leakage" reports (torch-free, so the description can name
it). Losses are mean squared errors on a target of variance 1: 1 is the loss of predicting the
mean, and 1 minus a loss is the share of the variance explained."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class GroupLeakageSignature(Signature):
    # The split.
    rows_per_user: int | None = None
    train_rows: int | None = None
    val_rows: int | None = None  # after any deduplication
    unseen_rows: int | None = None  # the held-out users: nobody in the pool
    removed_by_dedupe: int | None = None  # validation rows the chosen deduplication dropped
    # The audits, each a count of validation rows.
    exact_matches: int | None = None  # features found bit for bit in training
    shared_user_rows: int | None = None  # the row's user also wrote training rows
    near_copies_found: int | None = None  # a training row within the near-copy distance
    shared_share: float | None = None  # rows either of the last two audits flags / val_rows
    user_share_found: float | None = None  # shared_user_rows / val_rows
    copy_share_found: float | None = None  # near_copies_found / val_rows
    # The losses, read at the end of training.
    final_train_loss: float | None = None
    final_val_loss: float | None = None
    unseen_loss: float | None = None  # the honest reference: users the model never saw
    known_user_loss: float | None = None  # fresh reviews of users who have training rows
    flagged_val_loss: float | None = None  # the validation rows an audit flags
    unflagged_val_loss: float | None = None  # the rest: honest rows, should score like unseen
    val_optimism: float | None = None  # unseen_loss - final_val_loss: > 0 when validation leaks
    # Standard error of that difference were both honest samples (rows of one user clustered).
    optimism_noise: float | None = None
    # What the flagged shares predict: each flagged row scores as a known user's fresh review
    # (shared user) or as the training row it copies (near copy), every other one as unseen:
    # user share x (unseen - known-user loss) + copy share x (unseen - training loss).
    expected_optimism: float | None = None
    expected_from_users: float | None = None  # its first term
    expected_from_copies: float | None = None  # its second term
    # Closed-form floors of the population (the targets' variance shares).
    unseen_floor: float | None = None  # user share + noise: the best any model does on new users
    known_floor: float | None = None  # noise: the best possible with the user's offset known
