"""The spike finder: which steps spiked, where in the epoch they land, and what they cost."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from drills.catalog.loss_spikes.setup import SpikesConfig
from drills.catalog.loss_spikes.signature import SpikesSignature
from drills.catalog.loss_spikes.step import update_share
from drills.core.curves import tail_mean
from drills.kit.tables import table

HEIGHT_FLOOR = 1e-3  # nats


def find_spikes(losses: Sequence[float], config: SpikesConfig) -> list[int]:
    """Steps whose loss stands far above the median of the few steps just before."""
    spikes = []
    for step in range(config.window, len(losses)):
        before = statistics.median(losses[step - config.window : step])
        if losses[step] > config.spike_ratio * before and losses[step] - before > config.spike_rise:
            spikes.append(step)
    return spikes


def commonest_position(spikes: Sequence[int], config: SpikesConfig) -> int | None:
    """The place in the epoch where most spikes land (the earliest such place on a tie)."""
    if not spikes:
        return None
    counts = Counter(step % config.batches for step in spikes)
    return max(sorted(counts), key=lambda position: counts[position])


def spike_height(losses: Sequence[float], step: int, config: SpikesConfig) -> float:
    """How many times higher the loss is than the median of the few steps before it."""
    before = statistics.median(losses[max(0, step - config.window) : step] or losses[:1])
    # A confident model's loss can round to 0.0 in float32: measure against at least 1e-3.
    return losses[step] / max(before, HEIGHT_FLOOR)


def summarise(
    config: SpikesConfig,
    losses: Sequence[float],
    grad_norms: Sequence[float],
    update_norms: Sequence[float],
    clean: Sequence[float],
    spikes: Sequence[int],
) -> SpikesSignature:
    """The curve's numbers; clean[t] is the clean loss before step t (one more than losses)."""
    signature = SpikesSignature(
        epochs=config.epochs,
        batches_per_epoch=config.batches,
        steps_run=len(losses),
        initial_loss=losses[0] if losses else None,
        chance_loss=math.log(config.classes),
        final_loss=tail_mean(losses),
        final_clean_loss=clean[-1],
        max_loss=max(losses) if losses else None,
        spike_count=len(spikes),
        spike_steps=", ".join(str(step) for step in spikes),
    )
    # The change of the clean loss that each step caused: negative when the step helped.
    change = [clean[step + 1] - clean[step] for step in range(len(losses))]
    shares = [update_share(update_norms[s], grad_norms[s], config.rate) for s in range(len(losses))]
    position = commonest_position(spikes, config)
    if position is not None:
        at_position = [step for step in spikes if step % config.batches == position]
        signature.spike_position = position
        signature.spike_repeats = len(at_position)  # one step per epoch has that place
        signature.spike_height = statistics.median(
            spike_height(losses, s, config) for s in at_position
        )
        signature.spike_setback = statistics.mean(change[s] for s in at_position)
        signature.spike_grad_norm = statistics.median(grad_norms[s] for s in at_position)
        signature.spike_update_share = median_or_none(shares[s] for s in at_position)
    # After the first epoch, so that the big early improvements do not hide in the reference.
    normal = [step for step in range(config.batches, len(losses)) if step not in spikes]
    if normal:
        signature.normal_step_change = statistics.mean(change[step] for step in normal)
        signature.normal_grad_norm = statistics.median(grad_norms[step] for step in normal)
        signature.normal_update_share = median_or_none(shares[step] for step in normal)
    return signature


def median_or_none(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def spikes_table(
    config: SpikesConfig,
    losses: Sequence[float],
    grad_norms: Sequence[float],
    update_norms: Sequence[float],
    clean: Sequence[float],
    spikes: Sequence[int],
) -> dict[str, Any]:
    rows = []
    for step in spikes:
        window = losses[max(0, step - config.window) : step]
        rows.append(
            [
                step,
                step // config.batches + 1,
                step % config.batches,
                losses[step],
                statistics.median(window),
                spike_height(losses, step, config),
                grad_norms[step],
                update_share(update_norms[step], grad_norms[step], config.rate),
                clean[step + 1] - clean[step],
            ]
        )
    return table(
        "spikes",
        "Spikes: where they land",
        (
            "step",
            "epoch",
            "place in epoch",
            "loss",
            f"median of the {config.window} steps before",
            "height (x)",
            "gradient norm",
            "update made / update asked",
            "change of the clean loss",
        ),
        rows,
        note=(
            "The update asked is the learning rate times the gradient norm; clipping makes the "
            "update made smaller. "
            f"A step spikes when its loss is over {config.spike_ratio:g}x the median of the "
            f"{config.window} steps before it (and at least {config.spike_rise:g} higher). "
            f"{config.batches} batches per epoch, always in the same order."
        ),
    )


def position_table(
    config: SpikesConfig, losses: Sequence[float], clean: Sequence[float], spikes: Sequence[int]
) -> dict[str, Any]:
    """Epoch by epoch, the step at the place where spikes recur: when the batch began to show."""
    position = commonest_position(spikes, config)
    rows = []
    if position is not None:
        for step in range(position, len(losses), config.batches):
            rows.append(
                [
                    step // config.batches + 1,
                    step,
                    losses[step],
                    step in spikes,
                    clean[step + 1] - clean[step],
                ]
            )
    return table(
        "by_epoch",
        "The place where spikes recur, epoch by epoch",
        ("epoch", "step", "loss", "spiked", "change of the clean loss"),
        rows,
        note="Empty when nothing spiked. The clean loss is measured on the correct labels of "
        "all the data, before and after the step.",
    )
