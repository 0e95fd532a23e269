"""The training loop of "Loss spikes", the spike finder, and the replay from a checkpoint.

Kept apart from the drill's description (drills/loss_spikes.py) so that only a worker process
that actually trains imports torch.
"""

from __future__ import annotations

import hashlib
import math
import statistics
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.core.contract import DrillOutcome, Reporter, SignatureValue
from drills.kit.audit import ParameterAudit, total_grad_norm
from drills.kit.checkpoint import Checkpoint, restore, take_checkpoint
from drills.kit.curves import tail_mean
from drills.kit.tables import table

SIGNATURE_KEYS = (
    "epochs",
    "batches_per_epoch",
    "steps_run",
    "initial_loss",
    "chance_loss",
    "final_loss",
    "final_clean_loss",
    "max_loss",
    "spike_count",
    "spike_steps",
    "spike_position",
    "spike_repeats",
    "spike_height",
    "spike_setback",
    "normal_step_change",
    "spike_grad_norm",
    "normal_grad_norm",
    "replay_step",
    "replay_position",
    "replay_recorded_loss",
    "replay_suspect_loss",
    "replay_reproduced",
    "replay_normal_position",
    "replay_normal_loss",
    "replay_suspect_setback",
    "replay_normal_setback",
    "nonfinite_step",
)


HEIGHT_FLOOR = 1e-3  # nats


@dataclass(frozen=True)
class SpikesConfig:
    bad_batch: bool = True
    clip: float = 0.0  # max gradient norm; 0 = no clipping
    warmup: int = 0  # steps of linear learning-rate warmup; 0 = none
    lr: float = 0.5
    classes: int = 4
    features: int = 16
    hidden: int = 64
    batch_size: int = 16
    batches: int = 10  # per epoch, always in the same order
    epochs: int = 8
    bad_position: int = 6  # where in the epoch the corrupt batch sits
    # The spike finder: a step spikes when its loss is over `spike_ratio` times the median of
    # the `window` steps before it, and higher by at least `spike_rise` nats (late in training
    # the normal loss is tiny, and 3x a tiny number is still noise).
    window: int = 5
    spike_ratio: float = 3.0
    spike_rise: float = 0.5

    @property
    def steps(self) -> int:
        return self.batches * self.epochs


@dataclass(frozen=True)
class Dataset:
    inputs: torch.Tensor  # (batches, batch_size, features)
    labels: torch.Tensor  # (batches, batch_size): what training sees, one batch corrupt if on
    true_labels: torch.Tensor  # (batches, batch_size): the correct labels


@dataclass
class StepResult:
    loss: float
    grad_norm: float | None  # None: the loss or the gradient was not finite, no step was taken


class MLP(nn.Module):
    def __init__(self, config: SpikesConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]


def make_dataset(config: SpikesConfig, seed: int) -> Dataset:
    """Points around one random centre per class, split into batches (private generator)."""
    generator = torch.Generator().manual_seed(seed)
    count = config.batches * config.batch_size
    centres = torch.randn(config.classes, config.features, generator=generator)
    labels = (torch.arange(count) % config.classes)[torch.randperm(count, generator=generator)]
    inputs = centres[labels] + torch.randn(count, config.features, generator=generator)
    true_labels = labels.view(config.batches, config.batch_size)
    seen = true_labels.clone()
    if config.bad_batch:
        # Every label of one batch moved to the next class: all wrong, none obviously invalid.
        seen[config.bad_position] = (seen[config.bad_position] + 1) % config.classes
    return Dataset(inputs.view(config.batches, config.batch_size, -1), seen, true_labels)


def lr_at(step: int, config: SpikesConfig) -> float:
    if config.warmup > 0:
        return config.lr * min(1.0, (step + 1) / config.warmup)
    return config.lr


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    lr: float,
    clip: float,
    audit: ParameterAudit | None = None,
) -> StepResult:
    """One step of training; the same code runs the real steps and the replays."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = F.cross_entropy(model(inputs), labels)
    if not math.isfinite(loss.item()):
        return StepResult(loss.item(), None)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    if audit is not None:
        audit.after_backward()
    grad_norm = total_grad_norm(model.parameters())  # before clipping: what the batch asked for
    if not math.isfinite(grad_norm):
        return StepResult(loss.item(), None)  # a step on it would poison every weight
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return StepResult(loss.item(), grad_norm)


def clean_loss(model: nn.Module, data: Dataset) -> float:
    """Loss on every example with its correct label: what a step really did to the model."""
    with torch.no_grad():
        logits = model(data.inputs.flatten(0, 1))
        return float(F.cross_entropy(logits, data.true_labels.flatten()))


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


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train epochs over batches in a fixed order, then replay the worst spike; see LossSpikes."""
    config = SpikesConfig(
        bad_batch=knobs["bad_batch"] == "on",
        clip=knobs["clip"],
        warmup=knobs["warmup"],
        lr=knobs["lr"],
    )
    data = make_dataset(config, seed)
    model = MLP(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    audit = ParameterAudit(model, optimizer)

    losses: list[float] = []
    grad_norms: list[float] = []
    clean = [clean_loss(model, data)]  # clean[t] is the clean loss before step t
    checkpoints: list[Checkpoint] = []  # one at the start of every epoch, as a real run keeps
    nonfinite_step: int | None = None
    for step in range(config.steps):
        position = step % config.batches
        if position == 0:
            checkpoints.append(take_checkpoint(model, optimizer, step))
        lr = lr_at(step, config)
        result = train_step(
            model, optimizer, data.inputs[position], data.labels[position], lr, config.clip, audit
        )
        if result.grad_norm is None:
            nonfinite_step = step  # stop rather than plot NaN
            break
        after = clean_loss(model, data)
        if not math.isfinite(after):
            nonfinite_step = step  # the step overflowed the weights
            break
        losses.append(result.loss)
        grad_norms.append(result.grad_norm)
        clean.append(after)
        report.metric("loss", step, result.loss)
        report.metric("clean_loss", step, after)
        report.metric("grad_norm", step, result.grad_norm)
        report.metric("lr", step, lr)
    rows = audit.rows()  # before the replays move the weights

    spikes = find_spikes(losses, config)
    signature = summarise(config, losses, grad_norms, clean, spikes, nonfinite_step)
    replay = replay_worst_spike(model, optimizer, data, config, checkpoints, losses, spikes)
    signature |= replay.signature()
    diagnostics = {
        "parameters": rows,
        "tables": [
            spikes_table(config, losses, grad_norms, clean, spikes),
            position_table(config, losses, clean, spikes),
            replay.table(),
        ],
    }
    return DrillOutcome(signature, diagnostics, describe_inputs(data, config, replay.position))


def summarise(
    config: SpikesConfig,
    losses: Sequence[float],
    grad_norms: Sequence[float],
    clean: Sequence[float],
    spikes: Sequence[int],
    nonfinite_step: int | None,
) -> dict[str, SignatureValue]:
    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    signature |= {
        "epochs": config.epochs,
        "batches_per_epoch": config.batches,
        "steps_run": len(losses),
        "initial_loss": losses[0] if losses else None,
        "chance_loss": math.log(config.classes),
        "final_loss": tail_mean(losses),
        "final_clean_loss": clean[-1],
        "max_loss": max(losses) if losses else None,
        "spike_count": len(spikes),
        "spike_steps": ", ".join(str(step) for step in spikes),
        "nonfinite_step": nonfinite_step,
    }
    # The change of the clean loss that each step caused: negative when the step helped.
    change = [clean[step + 1] - clean[step] for step in range(len(losses))]
    position = commonest_position(spikes, config)
    if position is not None:
        at_position = [step for step in spikes if step % config.batches == position]
        signature |= {
            "spike_position": position,
            "spike_repeats": len(at_position),  # one step per epoch has that place
            "spike_height": statistics.median(spike_height(losses, s, config) for s in at_position),
            "spike_setback": statistics.mean(change[s] for s in at_position),
            "spike_grad_norm": statistics.median(grad_norms[s] for s in at_position),
        }
    # After the first epoch, so that the big early improvements do not hide in the reference.
    normal = [step for step in range(config.batches, len(losses)) if step not in spikes]
    if normal:
        signature |= {
            "normal_step_change": statistics.mean(change[step] for step in normal),
            "normal_grad_norm": statistics.median(grad_norms[step] for step in normal),
        }
    return signature


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

    def signature(self) -> dict[str, SignatureValue]:
        return {
            "replay_step": self.step,
            "replay_position": self.position,
            "replay_recorded_loss": self.recorded_loss,
            "replay_suspect_loss": self.suspect_loss,
            # Same state, same batch, same code: the replay must give the recorded loss exactly.
            "replay_reproduced": None
            if self.suspect_loss is None
            else self.suspect_loss == self.recorded_loss,
            "replay_normal_position": self.normal_position,
            "replay_normal_loss": self.normal_loss,
            "replay_suspect_setback": self.suspect_setback,
            "replay_normal_setback": self.normal_setback,
        }

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
        train_step(
            model, optimizer, data.inputs[p], data.labels[p], lr_at(step, config), config.clip
        )
    just_before = take_checkpoint(model, optimizer, target)

    replay = Replay(target, position, normal_position, recorded_loss=losses[target])
    before = clean_loss(model, data)
    lr = lr_at(target, config)
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
    if result.grad_norm is None:
        return loss, None  # no step was taken
    after = clean_loss(model, data)
    return loss, (after - before) if math.isfinite(after) and math.isfinite(before) else None


def spikes_table(
    config: SpikesConfig,
    losses: Sequence[float],
    grad_norms: Sequence[float],
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
            "change of the clean loss",
        ),
        rows,
        note=(
            f"A step spikes when its loss is over {config.spike_ratio:g}x the median of the "
            f"{config.window} steps before it (and at least {config.spike_rise:g} higher). "
            f"{config.batches} batches per epoch, always in the same order."
        ),
    )


def position_table(
    config: SpikesConfig, losses: Sequence[float], clean: Sequence[float], spikes: Sequence[int]
) -> dict[str, Any]:
    """Epoch by epoch, the step at the place where spikes recur: shows what warmup changes."""
    position = commonest_position(spikes, config)
    rows = []
    if position is not None:
        for step in range(position, len(losses), config.batches):
            rows.append(
                [
                    step // config.batches + 1,
                    step,
                    lr_at(step, config),
                    losses[step],
                    step in spikes,
                    clean[step + 1] - clean[step],
                ]
            )
    return table(
        "by_epoch",
        "The place where spikes recur, epoch by epoch",
        ("epoch", "step", "learning rate", "loss", "spiked", "change of the clean loss"),
        rows,
        note="Empty when nothing spiked. The clean loss is measured on the correct labels of "
        "all the data, before and after the step.",
    )


def dataset_digest(data: Dataset) -> str:
    sha = hashlib.sha256()
    for values, fmt in ((data.inputs, "f"), (data.labels, "q"), (data.true_labels, "q")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_inputs(data: Dataset, config: SpikesConfig, position: int | None) -> dict[str, Any]:
    examples = []
    if position is not None:
        # The raw examples of the batch the replay suspected: look at them before anything else.
        for i in range(4):
            examples.append(
                {
                    "batch_position": position,
                    "features_first4": [round(v, 3) for v in data.inputs[position, i, :4].tolist()],
                    "label_in_training": int(data.labels[position, i]),
                    "correct_label": int(data.true_labels[position, i]),
                }
            )
    return {
        "shapes": {
            "inputs": list(data.inputs.shape),
            "labels": list(data.labels.shape),
        },
        "sha256": dataset_digest(data),
        "examples": examples,
        "wrong_labels_per_batch": (data.labels != data.true_labels).sum(dim=1).tolist(),
        "note": (
            f"{config.epochs} epochs of the same {config.batches} batches in the same order; "
            "the examples are from the batch the replay suspected"
        ),
    }
