"""What a run of "Overfitting and leakage" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class OverfittingSignature(Signature):
    # The split.
    train_examples: int | None = None  # fresh examples plus leaked copies
    distinct_examples: int | None = None  # different examples among them (a repeat counts once)
    leaked_examples: int | None = None  # validation examples copied into training
    duplicates_found: int | None = None  # validation examples an exact-match search finds there
    val_examples: int | None = None
    clean_examples: int | None = None  # the held-out set nothing is ever copied from
    steps: int | None = None
    # The curves; "final" is the mean of the last 10% of evaluations.
    final_train_loss: float | None = None
    best_step: int | None = None  # lowest validation loss: the checkpoint you would keep
    min_val_loss: float | None = None
    final_val_loss: float | None = None
    val_rise: float | None = None  # how far validation climbed back from its minimum
    final_gap: float | None = None  # validation minus training, at the end
    clean_loss_at_best_step: float | None = None  # what that kept checkpoint really scores
    best_clean_step: int | None = None  # lowest clean loss (hindsight)
    min_clean_loss: float | None = None
    final_clean_loss: float | None = None
    clean_gap: float | None = None  # clean held-out minus training, at the end
    val_optimism: float | None = None  # clean minus validation: > 0 when validation leaked
    # How far two honest samples of this size differ by chance: the standard error of validation
    # minus clean loss, from the per-example losses of the last checkpoint.
    optimism_noise: float | None = None
    # Theoretical levels.
    noise_floor: float | None = None  # the true rule's own expected loss: the best possible
    chance_loss: float | None = None  # ln(classes)
    # If the duplicated share of validation sits at the training loss and the rest at the clean
    # loss, validation looks better than clean data by that share of the clean gap.
    expected_optimism: float | None = None
