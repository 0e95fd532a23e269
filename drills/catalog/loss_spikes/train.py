"""The training loop of "Loss spikes": epochs over the same batches in the same order, a
checkpoint at the start of each epoch, then the spike finder and the replay of the worst spike.

Kept apart from the drill's description (__init__.py) so that only a worker process that
actually trains imports torch.
"""

from __future__ import annotations

from typing import Any

import torch

from drills.catalog.loss_spikes.replay import replay_worst_spike
from drills.catalog.loss_spikes.setup import MLP, SpikesConfig, describe_inputs, make_dataset
from drills.catalog.loss_spikes.spikes import find_spikes, position_table, spikes_table, summarise
from drills.catalog.loss_spikes.step import clean_loss, train_step
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.checkpoint import Checkpoint, take_checkpoint
from drills.kit.run import Run


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train epochs over batches in a fixed order, then replay the worst spike; see LossSpikes."""
    config = SpikesConfig(
        bad_batch=knobs["bad_batch"],
        clip=knobs["clip"],
        lr=knobs["lr"],
        hardcoded_lr=knobs["hardcoded_lr"],
    )
    run = Run(seed, report)
    data = make_dataset(config, run.data_rng)
    model = MLP(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.rate)
    run.watch(model, optimizer)

    initial_clean = clean_loss(model, data)
    checkpoints: list[Checkpoint] = []  # one at the start of every epoch, as a real run keeps
    for step in range(config.steps):
        position = step % config.batches
        if position == 0:
            checkpoints.append(take_checkpoint(model, optimizer, step))
        inputs, labels = data.inputs[position], data.labels[position]
        result = train_step(
            model, optimizer, inputs, labels, config.rate, config.clip, run.after_backward
        )
        if run.stop_if_nonfinite(step, result.loss, result.grad_norm):
            break  # no step was taken: stop rather than plot NaN
        after = clean_loss(model, data)
        if run.stop_if_nonfinite(step, after, result.update_norm):
            break  # the step overflowed the weights
        run.log("loss", step, result.loss)
        run.log("clean_loss", step, after)
        run.log("grad_norm", step, result.grad_norm)
        run.log("update_norm", step, result.update_norm)
    rows = run.parameter_rows()  # before the replays move the weights

    losses, grad_norms = run.values("loss"), run.values("grad_norm")
    clean = [initial_clean, *run.values("clean_loss")]  # clean[t]: the clean loss before step t
    spikes = find_spikes(losses, config)
    signature = summarise(config, losses, grad_norms, run.values("update_norm"), clean, spikes)
    signature.nonfinite_step = run.nonfinite_step
    # Read back from the optimizer and the batches themselves, not from the knobs: what a
    # learner who prints them in their own loop would see.
    signature.configured_lr = config.lr
    signature.optimizer_lr = float(optimizer.param_groups[0]["lr"])
    signature.loader_changed_labels = int((data.labels != data.stored_labels).sum())
    replay = replay_worst_spike(model, optimizer, data, config, checkpoints, losses, spikes)
    replay.add_to(signature)
    return run.outcome(
        signature,
        inputs=describe_inputs(data, config, replay.position),
        parameters=rows,
        tables=[
            spikes_table(config, losses, grad_norms, run.values("update_norm"), clean, spikes),
            position_table(config, losses, clean, spikes),
            replay.table(),
        ],
    )
