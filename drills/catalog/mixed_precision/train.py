"""The training loop of "Mixed precision": float16 autocast with torch.amp.GradScaler on the CPU,
each step checked against the same step taken in float32 from the same weights.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.mixed_precision.problem import (
    Regression,
    decoded_examples,
    make_problem,
    regression_digest,
)
from drills.catalog.mixed_precision.signature import MixedPrecisionSignature
from drills.catalog.mixed_precision.twin import (
    ReferenceStep,
    cosine,
    flat_grad,
    flat_weights,
    float32_step,
    norm,
    stepped,
)
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.audit import total_grad_norm
from drills.kit.run import Run
from drills.kit.tables import table

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class MixedPrecisionConfig:
    precision: str = "float16"  # float16: autocast and a GradScaler; float32: neither
    unscale: str = "first"  # first: unscale_ before the loop reads .grad; late: after
    clip: str = "on"  # on: clip the gradient norm at max_norm; off: only read it for the log
    init_scale_power: int = 10  # GradScaler(init_scale=2**power); GradScaler's default is 16
    lr: float = 0.2  # plain SGD: the step is the rate times the (clipped) gradient
    steps: int = 50  # optimizer steps
    max_norm: float = 1.0  # where clipping cuts the gradient norm
    batch_size: int = 32
    examples: int = 512  # the training set
    features: int = 8
    hidden: int = 32  # tanh units of the one hidden layer
    noise: float = 0.05  # std of the targets' noise


@dataclass(frozen=True)
class StepReadings:
    loss: float  # the batch loss as the loop logs it (computed under autocast)
    scaled_grad: torch.Tensor  # .grad right after backward, flattened, float64
    logged_norm: float  # the norm the loop read (clip_grad_norm_'s total, or its own)


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with float16 autocast and a GradScaler, the chosen variant's way; see
    MixedPrecision."""
    config = MixedPrecisionConfig(
        precision=knobs["precision"],
        unscale=knobs["unscale"],
        clip=knobs["clip"],
        init_scale_power=knobs["init_scale_power"],
        lr=knobs["lr"],
        steps=knobs["steps"],
    )
    run = Run(seed, report)
    data = make_problem(config.examples, config.features, config.noise, run.data_rng)
    model = make_model(config)  # initial weights from the runner's manual_seed
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    scaler = torch.amp.GradScaler(
        "cpu", init_scale=2.0**config.init_scale_power, enabled=config.precision == "float16"
    )
    # The reference: a float32 twin set to the model's weights before every step, which takes
    # the step the loop means to take (unscaled gradient, clipped as configured) on the same
    # batch. And the whole loop run in float32 from the same first weights, for the curve.
    twin = copy.deepcopy(model)
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=config.lr)
    float32_run = copy.deepcopy(model)
    float32_optimizer = torch.optim.SGD(float32_run.parameters(), lr=config.lr)
    twin_max_norm = config.max_norm if config.clip == "on" else None
    run.watch(model, optimizer)
    signature = MixedPrecisionSignature(initial_scale=scaler.get_scale())
    skipped: list[int] = []
    ratios: list[float] = []
    skips_without_halving = halvings_without_skip = 0
    first_step: list[list[Any]] = []

    for step, (x, y) in zip(range(config.steps), batches(data, config, run), strict=False):
        set_loss = training_set_loss(model, data)  # at the weights this step starts from
        float32_loss = training_set_loss(float32_run, data)
        if math.isfinite(float32_loss):  # the float32 run may blow up at a large rate
            run.log("float32_set_loss", step, float32_loss)
            float32_step(float32_run, float32_optimizer, x, y, twin_max_norm)
        twin.load_state_dict(model.state_dict())
        reference = float32_step(twin, twin_optimizer, x, y, twin_max_norm)
        scale = scaler.get_scale()
        before = flat_weights(stepped(optimizer))
        readings = mixed_precision_step(model, optimizer, scaler, x, y, config)
        run.after_backward()  # the audit reads .grad as the step left it: unscaled (or inf)
        if run.stop_if_nonfinite(step, set_loss, readings.loss):
            break  # the loss itself overflowed: nothing left to read
        update = flat_weights(stepped(optimizer)) - before
        halved = scaler.get_scale() == scale / 2
        moved = not torch.equal(update, torch.zeros_like(update))
        if not moved:
            skipped.append(step)
        skips_without_halving += not moved and not halved
        halvings_without_skip += moved and halved
        run.log("loss", step, readings.loss)
        run.log("set_loss", step, set_loss)
        run.log("scale", step, scale)
        run.log("skipped_steps", step, len(skipped))
        twin_step = norm(reference.update)
        if not moved or not math.isfinite(twin_step) or twin_step == 0:
            continue  # nothing to compare: no step, or the twin's step is not a number
        ratio = norm(update) / twin_step
        ratios.append(ratio)
        run.log("update_ratio", step, ratio)
        if math.isfinite(readings.logged_norm):
            run.log("grad_norm", step, readings.logged_norm)
        run.log("float32_grad_norm", step, norm(reference.grad))
        if signature.first_taken_step is None:
            signature.first_taken_step = step
            read_first_step(signature, scale, readings, update, reference, config)
            first_step = per_parameter_rows(model, scale, readings, update, reference)

    signature.final_scale = scaler.get_scale()
    signature.lowest_scale = min(run.values("scale"), default=None)
    signature.steps_run = len(run.values("loss"))
    signature.skipped_steps = len(skipped)
    if signature.steps_run:
        signature.skipped_share = len(skipped) / signature.steps_run
    signature.first_skipped_step = skipped[0] if skipped else None
    signature.last_skipped_step = skipped[-1] if skipped else None
    signature.skips_without_halving = skips_without_halving
    signature.halvings_without_skip = halvings_without_skip
    signature.median_update_ratio = statistics.median(ratios) if ratios else None
    signature.initial_loss = run.first("set_loss")
    signature.final_loss = run.tail_mean("set_loss")
    signature.max_loss = max(run.values("set_loss"), default=None)
    signature.float32_final_loss = run.tail_mean("float32_set_loss")
    signature.nonfinite_step = run.nonfinite_step
    inputs = {
        "shapes": {"features": list(data.features.shape), "targets": list(data.targets.shape)},
        "batch_size": config.batch_size,
        "sha256": regression_digest(data),
        "examples": decoded_examples(data),
    }
    tables = [
        table(
            "first-step",
            "The first step the weights moved, per parameter: against the float32 twin's",
            ["parameter", "scaled gradient norm", "÷ scale", "float32 gradient norm", "step ratio"],
            first_step,
            note="The twin starts from the same weights, takes the same batch, in float32.",
        )
    ]
    return run.outcome(signature, inputs=inputs, tables=tables)


def read_first_step(
    signature: MixedPrecisionSignature,
    scale: float,
    readings: StepReadings,
    update: torch.Tensor,
    reference: ReferenceStep,
    config: MixedPrecisionConfig,
) -> None:
    """The first step the weights moved, against the float32 twin's from the same weights."""
    unscaled = readings.scaled_grad / scale
    float32_norm = norm(reference.grad)
    signature.step_scale = scale
    signature.update_ratio = norm(update) / norm(reference.update)
    signature.update_cosine = cosine(update, reference.update)
    # Clipping the scaled gradient (norm scale x ||g||) at max_norm leaves max_norm / scale
    # after the unscale; the twin's clipped gradient has norm min(||g||, max_norm).
    signature.scaled_clip_ratio = 1.0 / (scale * min(1.0, float32_norm / config.max_norm))
    signature.scaled_grad_norm = norm(readings.scaled_grad)
    signature.unscaled_grad_norm = norm(unscaled)
    signature.float32_grad_norm = float32_norm
    signature.logged_grad_norm = readings.logged_norm
    signature.norm_ratio = readings.logged_norm / float32_norm
    signature.grad_relative_diff = norm(unscaled - reference.grad) / float32_norm


def make_model(config: MixedPrecisionConfig) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(config.features, config.hidden), nn.Tanh(), nn.Linear(config.hidden, 1)
    )


def mixed_precision_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    x: torch.Tensor,
    y: torch.Tensor,
    config: MixedPrecisionConfig,
) -> StepReadings:
    """One step of the loop: forward under autocast, backward on the scaled loss, the norm read
    (and clipped), then the scaler's step and update."""
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.float16, enabled=config.precision == "float16"):
        prediction = model(x)  # float16 matmuls; the weights stay float32
    loss = F.mse_loss(prediction.float(), y)
    scaler.scale(loss).backward()  # type: ignore[no-untyped-call]  # .grad: scale x gradient
    scaled_grad = flat_grad(stepped(optimizer))
    if config.unscale == "first":
        scaler.unscale_(optimizer)  # .grad now holds the gradient itself
    logged_norm = read_grad_norm(stepped(optimizer), config)
    if config.unscale == "late":
        # Too late: the norm above was read, and clipped by, on the still-scaled gradients.
        scaler.unscale_(optimizer)
    scaler.step(optimizer)  # skipped when any gradient is inf or NaN
    scaler.update()  # after a skipped step: the scale halves
    return StepReadings(loss.item(), scaled_grad, logged_norm)


def read_grad_norm(parameters: list[nn.Parameter], config: MixedPrecisionConfig) -> float:
    """The gradient norm of all parameters together: clipped at max_norm, or only measured."""
    if config.clip == "off":
        return total_grad_norm(parameters)
    return float(nn.utils.clip_grad_norm_(parameters, config.max_norm))


@torch.no_grad()
def training_set_loss(model: nn.Module, data: Regression) -> float:
    return float(F.mse_loss(model(data.features), data.targets))


def batches(data: Regression, config: MixedPrecisionConfig, run: Run) -> Iterator[Batch]:
    """Batches drawn in order from shuffled epochs."""
    while True:
        order = torch.randperm(len(data), generator=run.order_rng)
        for start in range(0, len(data) - config.batch_size + 1, config.batch_size):
            index = order[start : start + config.batch_size]
            yield data.features[index], data.targets[index]


def per_parameter_rows(
    model: nn.Module,
    scale: float,
    readings: StepReadings,
    update: torch.Tensor,
    reference: ReferenceStep,
) -> list[list[Any]]:
    """Per parameter, at the first step the weights moved: the gradient as backward left it,
    that divided by the scale, the float32 twin's gradient, and the two steps' ratio."""
    rows, start = [], 0
    for name, parameter in model.named_parameters():
        part = slice(start, start + parameter.numel())
        twin_step = norm(reference.update[part])
        rows.append(
            [
                name,
                norm(readings.scaled_grad[part]),
                norm(readings.scaled_grad[part]) / scale,
                norm(reference.grad[part]),
                norm(update[part]) / twin_step if twin_step > 0 else None,
            ]
        )
        start += parameter.numel()
    return rows
