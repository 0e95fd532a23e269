"""What a run of "Loss spikes" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class SpikesSignature(Signature):
    # The run.
    epochs: int | None = None
    batches_per_epoch: int | None = None
    steps_run: int | None = None  # fewer than epochs x batches when the run went non-finite
    initial_loss: float | None = None
    chance_loss: float | None = None  # ln(classes)
    final_loss: float | None = None  # training batches, mean of the last 10% of steps
    final_clean_loss: float | None = None  # all the data with its correct labels, at the end
    max_loss: float | None = None
    # The spikes: a loss over 3x the median of the 5 steps before it.
    spike_count: int | None = None
    spike_steps: str | None = None  # "6, 16, 26"
    spike_position: int | None = None  # the place in the epoch where most spikes land
    spike_repeats: int | None = None  # epochs with a spike at that place
    spike_height: float | None = None  # median, x the loss just before
    spike_setback: float | None = None  # mean rise of the clean loss caused by a spike step
    normal_step_change: float | None = None  # the same for the other steps after epoch 1
    spike_grad_norm: float | None = None  # median gradient norm (before clipping) at the spikes
    normal_grad_norm: float | None = None  # the same for the other steps after epoch 1
    # The update a step made over the one its raw gradient asked for (lr x gradient norm):
    # 1 without clipping, clip / gradient norm when the clip cut the step down. Medians.
    spike_update_share: float | None = None
    normal_update_share: float | None = None  # the other steps after epoch 1
    # The replay of the suspect step from a checkpoint, with its batch and with a normal one.
    replay_step: int | None = None
    replay_position: int | None = None
    replay_recorded_loss: float | None = None  # what training saw at that step
    replay_suspect_loss: float | None = None
    replay_reproduced: bool | None = None  # the replay gave the recorded loss exactly
    replay_normal_position: int | None = None
    replay_normal_loss: float | None = None
    replay_suspect_setback: float | None = None  # clean-loss change caused by the suspect step
    replay_normal_setback: float | None = None  # the same for the normal batch's step
    nonfinite_step: int | None = None  # first step with a non-finite loss, gradient or weights
    # Where the rate and the labels come from.
    configured_lr: float | None = None  # the rate the run's settings ask for
    optimizer_lr: float | None = None  # the rate the optimizer stepped with
    loader_changed_labels: int | None = None  # labels the loader yields that the file lacks
