"""Runs outside the sandbox: a read run summed up as the drill sums up its own runs, with the
drill's spike finder (a loss over 3x the median of the 5 steps before it, and 0.5 nats higher)
and its line for a spike that recurs (3 epochs at one place), so that the judgement carries the
drill's signature and verdict. A "place" is the batch of the fixed order a step's examples come
from; an "epoch" at a place is one step there."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from drills.catalog.loss_spikes import RECUR_EPOCHS
from drills.catalog.loss_spikes.exercises.wrong_labels.problem import CONFIG
from drills.catalog.loss_spikes.exercises.wrong_labels.reading import Measure, Step
from drills.catalog.loss_spikes.signature import SpikesSignature
from drills.catalog.loss_spikes.spikes import find_spikes, spike_height
from drills.core.curves import tail_mean


@dataclass(frozen=True)
class Spikes:
    steps: list[int]  # every step that spiked
    place: int | None  # where most of them land (the earliest such place on a tie)
    at_place: list[int]  # the steps that spiked there
    visits: int  # steps taken at that place: its epochs

    @property
    def recur(self) -> bool:
        return len(self.at_place) >= RECUR_EPOCHS


def spikes_of(steps: Sequence[Step]) -> Spikes:
    found = find_spikes([step.loss for step in steps], CONFIG)
    if not found:
        return Spikes([], None, [], 0)
    counts = Counter(steps[index].place for index in found)
    place = max(sorted(counts), key=lambda p: counts[p])
    at_place = [index for index in found if steps[index].place == place]
    visits = sum(1 for step in steps if step.place == place)
    return Spikes(found, place, at_place, visits)


def normal_rate(steps: Sequence[Step], spikes: Spikes) -> float | None:
    """The learning rate of the run's ordinary steps (median over the steps that moved)."""
    rates = [
        rate
        for index, step in enumerate(steps)
        if index not in spikes.steps and step.moved > 0 and (rate := step.rate) is not None
    ]
    return statistics.median(rates) if rates else None


def share(step: Step, rate: float | None) -> float | None:
    """The update a step made over the one the run's ordinary rate asks of its gradient: 1 for
    plain SGD, less where clipping cut the step, 0 where it was skipped."""
    if rate is None or not rate > 0 or step.rate is None:
        return None
    return step.rate / rate


def median_or_none(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def signature_of(
    steps: Sequence[Step], measure: Measure, weights_at: torch.Tensor
) -> SpikesSignature:
    losses = [step.loss for step in steps]
    spikes = spikes_of(steps)
    places = Counter(step.place for step in steps)
    signature = SpikesSignature(
        epochs=max(places.values()),
        batches_per_epoch=len(places),
        steps_run=len(steps),
        initial_loss=losses[0],
        chance_loss=math.log(CONFIG.classes),
        final_loss=tail_mean(losses),
        final_clean_loss=steps[-1].clear_after,
        max_loss=max(losses),
        spike_count=len(spikes.steps),
        spike_steps=", ".join(str(index) for index in spikes.steps),
    )
    change = [step.clear_after - step.clear_before for step in steps]
    rate = normal_rate(steps, spikes)
    if spikes.place is not None:
        at = spikes.at_place
        signature.spike_position = spikes.place
        signature.spike_repeats = len(at)
        signature.spike_height = statistics.median(spike_height(losses, i, CONFIG) for i in at)
        signature.spike_setback = statistics.mean(change[i] for i in at)
        signature.spike_grad_norm = statistics.median(steps[i].grad_norm for i in at)
        signature.spike_update_share = median_or_none(share(steps[i], rate) for i in at)
        if spikes.recur:  # a stray blip early on is not replayed: it says nothing of a batch
            add_replay(signature, steps, measure, weights_at, at[-1])
    # After the first epoch, so that the big early improvements do not hide in the reference.
    normal = [i for i in range(len(places), len(steps)) if i not in spikes.steps]
    if normal:
        signature.normal_step_change = statistics.mean(change[i] for i in normal)
        signature.normal_grad_norm = statistics.median(steps[i].grad_norm for i in normal)
        signature.normal_update_share = median_or_none(share(steps[i], rate) for i in normal)
    return signature


def add_replay(
    signature: SpikesSignature,
    steps: Sequence[Step],
    measure: Measure,
    weights_at: torch.Tensor,
    target: int,
) -> None:
    """The drill's replay, read off the record: at the weights the last spike met, the loss of
    its examples against that of the next step's examples (another place)."""
    suspect = steps[target]
    other = next((s for s in steps[target + 1 :] if s.place != suspect.place), None)
    if other is None:
        other = next((s for s in reversed(steps[:target]) if s.place != suspect.place), None)
    signature.replay_step = target
    signature.replay_position = suspect.place
    signature.replay_recorded_loss = signature.replay_suspect_loss = suspect.loss
    signature.replay_reproduced = True  # the same weights, examples and code: the same loss
    if other is not None:
        rows = torch.tensor(other.trained or other.rows)
        losses, _ = measure.examples(weights_at[target].double(), rows)
        signature.replay_normal_position = other.place
        signature.replay_normal_loss = float(losses.mean())
