"""The replay: reload the state from just before the suspect step and run that step twice, with
the batch that spiked and with a normal one. Only the data differs between the two."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from drills.catalog.loss_spikes.setup import Dataset, SpikesConfig
from drills.catalog.loss_spikes.signature import SpikesSignature
from drills.catalog.loss_spikes.spikes import commonest_position, spike_height
from drills.catalog.loss_spikes.step import StepResult, clean_loss, train_step
from drills.kit.checkpoint import Checkpoint, restore, take_checkpoint
from drills.kit.tables import table


@dataclass
class Replay:
    """The worst spike's step replayed from a checkpoint with two different batches."""

    step: int | None = None
    position: int | None = None
    normal_position: int | None = None
    recorded_loss: float | None = None
    suspect_loss: float | None = None
    suspect_setback: float | None = None
    normal_loss: float | None = None
    normal_setback: float | None = None

    def add_to(self, signature: SpikesSignature) -> None:
        signature.replay_step = self.step
        signature.replay_position = self.position
        signature.replay_recorded_loss = self.recorded_loss
        signature.replay_suspect_loss = self.suspect_loss
        # Same state, same batch, same code: the replay must give the recorded loss exactly.
        signature.replay_reproduced = (
            None if self.suspect_loss is None else self.suspect_loss == self.recorded_loss
        )
        signature.replay_normal_position = self.normal_position
        signature.replay_normal_loss = self.normal_loss
        signature.replay_suspect_setback = self.suspect_setback
        signature.replay_normal_setback = self.normal_setback

    def table(self) -> dict[str, Any]:
        return table(
            "replay",
            "Replay from a checkpoint taken just before the spike",
            ("run", "step", "batch position", "loss", "change of the clean loss"),
            [
                ("recorded in training", self.step, self.position, self.recorded_loss, None),
                (
                    "replay: the batch that spiked",
                    self.step,
                    self.position,
                    self.suspect_loss,
                    self.suspect_setback,
                ),
                (
                    "replay: a normal batch",
                    self.step,
                    self.normal_position,
                    self.normal_loss,
                    self.normal_setback,
                ),
            ],
            note=(
                "Both replays start from the same saved model and optimizer state. If only the "
                "suspect batch spikes, the data is to blame; if both do, the state is."
            ),
        )


def replay_worst_spike(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    data: Dataset,
    config: SpikesConfig,
    checkpoints: Sequence[Checkpoint],
    losses: Sequence[float],
    spikes: Sequence[int],
) -> Replay:
    """Reload the state from just before the suspect step and run that step with two batches."""
    target = pick_replay_step(losses, spikes, config)
    if target is None:
        return Replay()
    position = target % config.batches
    normal_position = (position + 1) % config.batches

    # Like a real run we only saved a checkpoint per epoch: reload the one of the spike's epoch
    # and train forward, in the same order, to the step just before the spike.
    epoch_start = checkpoints[target // config.batches]
    restore(model, optimizer, epoch_start)
    for step in range(epoch_start.step, target):
        p = step % config.batches
        train_step(model, optimizer, data.inputs[p], data.labels[p], config.rate, config.clip)
    just_before = take_checkpoint(model, optimizer, target)

    replay = Replay(target, position, normal_position, recorded_loss=losses[target])
    before = clean_loss(model, data)
    lr = config.rate
    suspect = train_step(
        model, optimizer, data.inputs[position], data.labels[position], lr, config.clip
    )
    replay.suspect_loss, replay.suspect_setback = finite_or_none(suspect, model, data, before)

    restore(model, optimizer, just_before)
    normal = train_step(
        model,
        optimizer,
        data.inputs[normal_position],
        data.labels[normal_position],
        lr,
        config.clip,
    )
    replay.normal_loss, replay.normal_setback = finite_or_none(normal, model, data, before)
    return replay


def pick_replay_step(
    losses: Sequence[float], spikes: Sequence[int], config: SpikesConfig
) -> int | None:
    """The last spike at the place where most spikes land (the model is most trained there,
    and a spike right after it may only be its echo); without spikes, the biggest bump."""
    position = commonest_position(spikes, config)
    if position is not None:
        return max(step for step in spikes if step % config.batches == position)
    candidates = range(config.window, len(losses))
    if not candidates:
        return None
    return max(candidates, key=lambda step: spike_height(losses, step, config))


def finite_or_none(
    result: StepResult, model: nn.Module, data: Dataset, before: float
) -> tuple[float | None, float | None]:
    """The replayed loss and the clean-loss change its step caused, None where not finite."""
    loss = result.loss if math.isfinite(result.loss) else None
    if not result.stepped:
        return loss, None
    after = clean_loss(model, data)
    return loss, (after - before) if math.isfinite(after) and math.isfinite(before) else None
