"""What a run of the learning-rate sweep reports (torch-free, so the description can name it).

Each rate's own numbers sit in numbered slots (1 = smallest rate), so every run has the same
fields whatever the number of rates; slots beyond the rates swept stay None.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.catalog.lr_sweep.verdicts import SLOTS, slot_key
from drills.core.contract import Signature


@dataclass
class LrSweepSignature(Signature):
    optimizer: str | None = None  # "sgd" or "adam"
    lr_count: int | None = None  # rates swept
    steps: int | None = None  # per rate
    initial_loss: float | None = None  # before the first step: the same for every rate
    target_variance: float | None = None  # the loss of always predicting the mean target
    best_lr: float | None = None  # lowest final loss among the stable rates
    best_final_loss: float | None = None
    flat_count: int | None = None  # rates that left the loss within 10% of the start
    falling_count: int | None = None  # rates that brought it down steadily
    unstable_count: int | None = None  # rates that made it jump up or overflow
    gradless_count: int | None = None  # rates whose optimizer found no gradient at any step
    outside_optimizer_count: int | None = None  # rates whose optimizer held none of the weights
    largest_stable_lr: float | None = None
    smallest_unstable_lr: float | None = None
    sharpness: float | None = None  # top Hessian eigenvalue at the initial weights
    stability_limit: float | None = None  # 2 / sharpness for plain gradient descent; None for Adam
    # Slot n: the rate (lr_n), its final loss (mean of the last 10% of finite steps), its drop
    # relative to the initial loss, its highest loss, and the step it overflowed at (or None).
    lr_1: float | None = None
    final_loss_1: float | None = None
    loss_drop_1: float | None = None
    max_loss_1: float | None = None
    nonfinite_step_1: int | None = None
    lr_2: float | None = None
    final_loss_2: float | None = None
    loss_drop_2: float | None = None
    max_loss_2: float | None = None
    nonfinite_step_2: int | None = None
    lr_3: float | None = None
    final_loss_3: float | None = None
    loss_drop_3: float | None = None
    max_loss_3: float | None = None
    nonfinite_step_3: int | None = None
    lr_4: float | None = None
    final_loss_4: float | None = None
    loss_drop_4: float | None = None
    max_loss_4: float | None = None
    nonfinite_step_4: int | None = None
    lr_5: float | None = None
    final_loss_5: float | None = None
    loss_drop_5: float | None = None
    max_loss_5: float | None = None
    nonfinite_step_5: int | None = None
    lr_6: float | None = None
    final_loss_6: float | None = None
    loss_drop_6: float | None = None
    max_loss_6: float | None = None
    nonfinite_step_6: int | None = None

    def fill_slot(
        self,
        slot: int,
        *,
        lr: float,
        final_loss: float,
        loss_drop: float,
        max_loss: float,
        nonfinite_step: int | None,
    ) -> None:
        """One rate's numbers, into the fields of its slot."""
        if slot not in SLOTS:
            raise ValueError(f"no slot {slot}: the sweep has slots {SLOTS.start}-{SLOTS.stop - 1}")
        numbers = {
            "lr": lr,
            "final_loss": final_loss,
            "loss_drop": loss_drop,
            "max_loss": max_loss,
            "nonfinite_step": nonfinite_step,
        }
        for name, value in numbers.items():
            setattr(self, slot_key(name, slot), value)
