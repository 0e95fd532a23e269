"""The training loop of "Batch size and noise": SGD on batches of B, each batch's loss read
against the training set's losses at the same weights, then the spread probe at the weights the
largest spike met.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.batch_noise.problem import (
    TASK,
    corrupt,
    log_log_slope,
    make_data,
    per_example_losses,
    spread_probe,
    worst_batch_loss,
)
from drills.catalog.batch_noise.signature import BatchNoiseSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.synthetic_classification import LabelledSet, decoded_examples, sets_digest
from drills.kit.tables import table

PROBE_SIZES = (1, 2, 4, 8, 16, 32, 64)  # powers of two: log2 B is the chart's x
PROBE_BATCHES = 2000  # per size: the measured std is within a few per cent of the truth
SEARCH_FROM = 20  # spikes are looked for from this step on (the first steps fall fast)


@dataclass(frozen=True)
class NoiseConfig:
    batch_size: int = 1  # B: examples per optimizer step
    bad_batch: str = "off"  # "on": the batch at bad_step is corrupt
    lr: float = 0.05  # plain SGD, no momentum
    steps: int = 300  # optimizer steps
    bad_step: int = 200  # where the corrupt batch comes, when planted
    examples: int = 512  # the training set


@dataclass(frozen=True)
class StepReading:
    """One step's batch against the training set at the weights that batch met."""

    loss: float  # the batch's loss
    set_loss: float  # the training set's mean loss
    sigmas: float  # (loss - set_loss) / (σ / √B)
    worst: float  # the highest loss a batch of B training examples could have had


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on batches of B with the chosen rate, a corrupt batch planted or not; see
    BatchNoise."""
    config = NoiseConfig(
        batch_size=knobs["batch_size"],
        bad_batch=knobs["bad_batch"],
        lr=knobs["lr"],
        steps=knobs["steps"],
    )
    run = Run(seed, report)
    data = make_data(config.examples, run.data_rng)
    model = nn.Linear(TASK.features, TASK.classes)  # initial weights from the runner's seed
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    readings: list[StepReading] = []
    # The weights each step started from: the probe and the replay need the spike's own.
    checkpoints: list[dict[str, torch.Tensor]] = []

    for step, index in zip(range(config.steps), batches(data, config, run), strict=False):
        losses = per_example_losses(model, data)  # at the weights this step starts from
        x, y = data.features[index], data.labels[index]
        if config.bad_batch == "on" and step == config.bad_step:
            x, y = corrupt(data, index)
        loss = F.cross_entropy(model(x), y)
        reading = read_step(loss.item(), losses, config.batch_size)
        if run.stop_if_nonfinite(step, reading.loss, reading.set_loss):
            break  # too large a rate: stop rather than plot inf
        checkpoints.append(copy.deepcopy(model.state_dict()))
        readings.append(reading)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        run.log("loss", step, reading.loss)
        run.log("set_loss", step, reading.set_loss)
        run.log("worst_batch", step, reading.worst)

    signature = BatchNoiseSignature(batch_size=config.batch_size, steps_run=len(readings))
    signature.initial_loss = run.first("set_loss")
    signature.final_loss = run.tail_mean("set_loss")
    signature.nonfinite_step = run.nonfinite_step
    read_spike(signature, readings)
    read_jump(signature, run.values("set_loss"))
    tables = []
    if signature.spike_step is not None:
        model.load_state_dict(checkpoints[signature.spike_step])
        tables.append(probe(signature, model, data, run))
    inputs = {
        "shapes": {"features": list(data.features.shape), "labels": list(data.labels.shape)},
        "batch_size": config.batch_size,
        "sha256": sets_digest(data),
        "examples": decoded_examples(data),
    }
    return run.outcome(signature, inputs=inputs, tables=tables)


def batches(data: LabelledSet, config: NoiseConfig, run: Run) -> Iterator[torch.Tensor]:
    """The indices of each step's batch: shuffled epochs, cut into batches of B in order."""
    while True:
        order = torch.randperm(len(data), generator=run.order_rng)
        for start in range(0, len(data) - config.batch_size + 1, config.batch_size):
            yield order[start : start + config.batch_size]


def read_step(loss: float, losses: torch.Tensor, batch_size: int) -> StepReading:
    set_loss = float(losses.mean())
    spread = float(losses.std(unbiased=False)) / math.sqrt(batch_size)
    return StepReading(
        loss=loss,
        set_loss=set_loss,
        sigmas=(loss - set_loss) / spread if spread > 0 else 0.0,
        worst=worst_batch_loss(losses, batch_size),
    )


def read_spike(signature: BatchNoiseSignature, readings: list[StepReading]) -> None:
    """The largest spike: the batch that stood highest above its own training set, in units of
    the spread a batch of B had there (the early steps, where everything falls fast, aside)."""
    if not readings:
        return
    candidates = range(min(SEARCH_FROM, len(readings) - 1), len(readings))
    step = max(candidates, key=lambda s: readings[s].sigmas)
    spike = readings[step]
    signature.spike_step = step
    signature.spike_loss = spike.loss
    signature.spike_set_loss = spike.set_loss
    signature.spike_sigmas = spike.sigmas
    signature.worst_batch_loss = spike.worst
    signature.spike_over_worst = spike.loss / spike.worst if spike.worst > 0 else None


def read_jump(signature: BatchNoiseSignature, set_losses: list[float]) -> None:
    """The largest one-step rise of the whole set's loss, relative to where it stood."""
    rises = [
        ((after - before) / before, step)
        for step, (before, after) in enumerate(zip(set_losses, set_losses[1:], strict=False))
        if step >= SEARCH_FROM and before > 0
    ]
    if rises:
        signature.set_loss_jump, signature.set_loss_jump_step = max(rises)
    elif set_losses:
        signature.set_loss_jump = 0.0


def probe(
    signature: BatchNoiseSignature, model: nn.Module, data: LabelledSet, run: Run
) -> dict[str, Any]:
    """The spread of the batch loss against B at the spike's weights, and the log-log fit."""
    probe_rng = torch.Generator().manual_seed(run.seed + 2)
    spreads = spread_probe(model, data, PROBE_SIZES, PROBE_BATCHES, probe_rng)
    for item in spreads:
        # x is log2 B (0 is B = 1, 6 is B = 64): with the log y axis, a log-log plot.
        run.log("spread", int(math.log2(item.batch_size)), item.measured)
        run.log("spread_closed_form", int(math.log2(item.batch_size)), item.closed_form)
    signature.per_example_std = spreads[0].closed_form
    signature.probe_batches = PROBE_BATCHES
    signature.spread_at_1 = spreads[0].measured
    signature.spread_at_64 = spreads[-1].measured
    signature.spread_slope = log_log_slope(spreads)
    signature.slope_theory = -0.5
    signature.worst_spread_error = max(abs(s.measured / s.closed_form - 1.0) for s in spreads)
    return table(
        "spread",
        "The spread of the batch loss against batch size, at the weights the spike met",
        ["batch size", "measured std", "σ / √B", "measured / closed form"],
        [[s.batch_size, s.measured, s.closed_form, s.measured / s.closed_form] for s in spreads],
        note=f"{PROBE_BATCHES} batches per size, drawn from the training set with replacement.",
    )
