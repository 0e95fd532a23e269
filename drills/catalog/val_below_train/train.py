"""The training loop of "Validation below training": one loss, measured three ways each epoch.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from drills.catalog.val_below_train.setup import ValBelowTrainConfig, describe_inputs, draw_sets
from drills.catalog.val_below_train.signature import ValBelowTrainSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.mode_blind import repeats_in_eval_mode
from drills.kit.run import Run
from drills.kit.synthetic_classification import (
    build_mlp,
    count_distinct,
    exact_matches,
    mean_loss,
    noise_floor,
)
from drills.kit.tables import table


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with dropout/augmentation as chosen; see ValBelowTrain."""
    config = ValBelowTrainConfig(
        dropout=knobs["dropout"],
        augment_noise=knobs["augment_noise"],
        eval_mode=knobs["eval_mode"],
        randomness=knobs["randomness"],
        data=knobs["data"],
    )
    # The run's generators: every knob setting sees the same sets and the same batch order
    # (dropout and noise draw from torch's global RNG).
    run = Run(seed, report)
    train_set, val_set, val_file_rows = draw_sets(config, run.data_rng)

    model = build_mlp(
        config.task,
        config.hidden,
        dropout=config.dropout,
        input_noise=config.augment_noise,
        mode_blind=config.randomness == "built-in",
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    val_in_train_mode = config.eval_mode == "train"

    batches_per_epoch = math.ceil(config.train_examples / config.batch_size)
    total_steps = config.epochs * batches_per_epoch
    step = 0
    for epoch in range(1, config.epochs + 1):
        model.train()  # dropout and input noise on
        batch_losses = []
        order = epoch_order(len(train_set), config.train_examples, run.order_rng)
        for start in range(0, config.train_examples, config.batch_size):
            indices = order[start : start + config.batch_size]
            for group in optimizer.param_groups:
                group["lr"] = cosine_lr(config.lr, step, total_steps)
            loss = F.cross_entropy(model(train_set.features[indices]), train_set.labels[indices])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            if start + config.batch_size >= config.train_examples:
                run.after_backward()  # once per epoch: the audit keeps the latest gradients
            optimizer.step()
            batch_losses.append(loss.item())
            step += 1

        # 1. What most loops print: the mean of this epoch's batch losses, each one taken with
        #    dropout and noise on, from weights that kept improving during the epoch.
        online = statistics.fmean(batch_losses)
        # 2. The end-of-epoch weights on the same training data, in eval mode (randomness off,
        #    unless it is built into the model).
        train_eval = mean_loss(model, train_set, train_mode=False)
        # 3. Validation, in whichever mode the loop (maybe wrongly) leaves the model in.
        val = mean_loss(model, val_set, train_mode=val_in_train_mode)

        run.log("train_online", epoch, online)
        run.log("train_eval", epoch, train_eval)
        run.log("val", epoch, val)
        run.log("online_minus_train_eval", epoch, online - train_eval)
        run.log("val_minus_train_eval", epoch, val - train_eval)

    # The last epochs, where the schedule has nearly stopped the weights.
    last = config.last_epochs
    online_tail, train_eval_tail, val_tail = (
        run.values(name)[-last:] for name in ("train_online", "train_eval", "val")
    )
    online_loss = statistics.fmean(online_tail)
    train_eval_loss = statistics.fmean(train_eval_tail)
    val_loss = statistics.fmean(val_tail)
    train_floor, chance = noise_floor(train_set), math.log(config.task.classes)
    signature = ValBelowTrainSignature(
        epochs=config.epochs,
        train_examples=len(train_set),
        distinct_examples=count_distinct(train_set.features),
        val_examples=len(val_set),
        val_file_rows=val_file_rows,
        duplicates_found=int(exact_matches(train_set.features, val_set.features).sum()),
        eval_repeatable=repeats_in_eval_mode(model, val_set.features),
        online_train_loss=online_loss,
        train_eval_loss=train_eval_loss,
        val_loss=val_loss,
        online_gap=online_loss - train_eval_loss,
        val_gap=val_loss - train_eval_loss,
        val_below_online=online_loss - val_loss,
        val_spread=spread(val_tail),
        train_eval_spread=spread(train_eval_tail),
        # 0 = no better than guessing, 1 = as good as the teacher itself.
        learned_share=(chance - train_eval_loss) / (chance - train_floor),
        noise_floor=noise_floor(val_set),
        train_noise_floor=train_floor,
        chance_loss=chance,
    )
    return run.outcome(
        signature,
        inputs=describe_inputs(train_set, val_set, config.data),
        tables=[
            how_each_loss_is_measured(config),
            last_epochs_table(online_tail, train_eval_tail, val_tail, config.epochs),
        ],
    )


def epoch_order(size: int, per_epoch: int, generator: torch.Generator) -> torch.Tensor:
    """The indices one epoch visits: a set smaller than `per_epoch` is repeated to fill the
    epoch and the whole is shuffled at once (a loader over the set concatenated with itself), so
    every data setting trains for the same number of steps and each example of a smaller set is
    met the same number of times.

    One shuffle of `per_epoch` positions, each read modulo the set's size: a table that holds
    the set repeated in turn to `per_epoch` rows (repeated-rows) is shuffled by the very same
    draw into the very same examples, batch for batch.
    """
    return torch.randperm(per_epoch, generator=generator) % size


def cosine_lr(peak: float, step: int, total_steps: int) -> float:
    """Cosine decay from `peak` to 0: late epochs barely move the weights, so a curve that still
    jumps about there is measuring noise, not learning."""
    return peak * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))


def spread(values: Sequence[float]) -> float:
    """How much a curve wobbles from epoch to epoch: the standard deviation of its points
    around their straight-line trend.

    Removing the trend matters: a curve that is still sliding down steadily has a large plain
    standard deviation without being noisy at all.
    """
    count = len(values)
    if count < 3:
        return 0.0
    x_mean = (count - 1) / 2
    y_mean = statistics.fmean(values)
    slope = sum((i - x_mean) * (y - y_mean) for i, y in enumerate(values)) / sum(
        (i - x_mean) ** 2 for i in range(count)
    )
    residuals = [y - (y_mean + slope * (i - x_mean)) for i, y in enumerate(values)]
    return math.sqrt(sum(r * r for r in residuals) / count)


def how_each_loss_is_measured(config: ValBelowTrainConfig) -> dict[str, Any]:
    noise = f"noise std {config.augment_noise:g}" if config.augment_noise > 0 else "none"
    val_train_mode = config.eval_mode == "train"
    # Built into the model, dropout and noise are on in eval mode too.
    blind = config.randomness == "built-in"
    return table(
        "measurements",
        "How each curve is measured",
        ("curve", "data", "model mode", "dropout active", "input noise", "weights"),
        (
            (
                "train_online",
                "training set",
                "train",
                config.dropout > 0,
                noise,
                "changing during the epoch",
            ),
            (
                "train_eval",
                "training set",
                "eval",
                blind and config.dropout > 0,
                noise if blind else "none",
                "end of epoch",
            ),
            (
                "val",
                "validation set",
                "train" if val_train_mode else "eval",
                (val_train_mode or blind) and config.dropout > 0,
                noise if val_train_mode or blind else "none",
                "end of epoch",
            ),
        ),
        note="Same teacher, same model: only the measurement differs between the curves.",
    )


def last_epochs_table(
    online: Sequence[float], train_eval: Sequence[float], val: Sequence[float], epochs: int
) -> dict[str, Any]:
    """The tails the signature averages, one row per epoch (the last of them is `epochs`)."""
    first_epoch = epochs - len(online) + 1
    rows = [
        (first_epoch + i, o, t, v)
        for i, (o, t, v) in enumerate(zip(online, train_eval, val, strict=True))
    ]
    return table(
        "last_epochs",
        f"The last {len(online)} epochs (the signature averages these)",
        ("epoch", "train_online", "train_eval", "val"),
        rows,
    )
