"""The training loop of "Gradient accumulation": k micro-batches per optimizer step, and each
step checked against the same step taken on one big batch of all k×B examples.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.gradient_accumulation.problem import (
    Regression,
    best_loss,
    decoded_examples,
    make_problem,
    regression_digest,
    stability_limit,
)
from drills.catalog.gradient_accumulation.signature import AccumulationSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.tables import table

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class AccumulationConfig:
    accumulation: str = "divided"  # how each micro-batch's loss is scaled (ACCUMULATIONS)
    micro_batches: int = 8  # k: backward passes per optimizer step
    lr: float = 0.16  # plain SGD: the step is the rate times the accumulated gradient
    steps: int = 40  # optimizer steps
    micro_batch_size: int = 16  # B: the batch that fits in memory, in the story
    examples: int = 512  # the training set
    features: int = 8  # inputs of the linear model (plus a bias)
    noise: float = 0.1  # std of the targets' noise: the best loss is about its square


@dataclass(frozen=True)
class Comparison:
    """The accumulated gradient against the big batch's, flattened over every parameter (None
    where a gradient is exactly zero and a ratio has no meaning)."""

    scale: float | None  # <accumulated, big> / ||big||^2
    cosine: float | None
    max_abs_diff: float
    relative_diff: float | None  # ||accumulated - big|| / ||big||


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Accumulate k micro-batches per step, as the chosen variant scales them; see
    GradientAccumulation."""
    config = AccumulationConfig(
        accumulation=knobs["accumulation"],
        micro_batches=knobs["micro_batches"],
        lr=knobs["lr"],
        steps=knobs["steps"],
    )
    run = Run(seed, report)
    data = make_problem(config.examples, config.features, config.noise, run.data_rng)
    model = nn.Linear(config.features, 1)  # initial weights from the runner's manual_seed
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    # The reference: a twin set to the model's weights before every step, which takes the step
    # on one big batch of the same k micro-batches, with the same optimizer and rate.
    twin = copy.deepcopy(model)
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    signature = AccumulationSignature(
        micro_batch_size=config.micro_batch_size,
        examples_per_step=config.micro_batches * config.micro_batch_size,
        stability_limit=stability_limit(data),
        best_loss=best_loss(data),
    )
    first_step: list[list[Any]] = []
    worst = 0.0

    for step, micro in zip(range(config.steps), step_batches(data, config, run), strict=False):
        set_loss = training_set_loss(model, data)  # at the weights this step starts from
        twin.load_state_dict(model.state_dict())
        big_loss = big_batch_backward(twin, twin_optimizer, micro)
        losses = accumulate(model, optimizer, micro, config.accumulation)
        run.after_backward()  # the audit reads .grad as the step will: all k gradients in it
        loss = sum(losses) / len(losses)  # the mean over the step's k×B examples, unscaled
        accumulated, big = flat_grad(model), flat_grad(twin)
        if run.stop_if_nonfinite(step, set_loss, loss, big_loss, norm(accumulated), norm(big)):
            break  # diverged: stop rather than plot inf
        comparison = compare(accumulated, big)

        before = flat_weights(model)
        optimizer.step()
        twin_optimizer.step()
        update, big_update = norm(flat_weights(model) - before), norm(flat_weights(twin) - before)
        ratio = update / big_update if big_update > 0 else None
        if run.stop_if_nonfinite(step, update, big_update):
            break

        if step == 0:
            signature.micro_batches = len(losses)
            signature.update_ratio = ratio
            signature.grad_scale = comparison.scale
            signature.grad_cosine = comparison.cosine
            signature.grad_max_abs_diff = comparison.max_abs_diff
            signature.grad_relative_diff = comparison.relative_diff
            first_step = per_parameter_rows(model, twin)
        if comparison.relative_diff is not None:
            worst = max(worst, comparison.relative_diff)
        run.log("loss", step, loss)
        run.log("set_loss", step, set_loss)
        run.log("grad_norm", step, norm(accumulated))
        run.log("big_batch_grad_norm", step, norm(big))
        if ratio is not None:
            run.log("update_ratio", step, ratio)

    if signature.update_ratio is not None:
        signature.effective_lr = config.lr * signature.update_ratio
        signature.worst_grad_relative_diff = worst
    # Read on the whole training set: a micro-batch of 16 strays by a third from the set's loss,
    # enough to look like a rise where the weights barely moved.
    signature.initial_loss = run.first("set_loss")
    signature.final_loss = run.tail_mean("set_loss")
    signature.max_loss = max(run.values("set_loss"), default=None)
    signature.steps_run = len(run.values("loss"))
    signature.nonfinite_step = run.nonfinite_step
    inputs = {
        "shapes": {"features": list(data.features.shape), "targets": list(data.targets.shape)},
        "micro_batch_size": config.micro_batch_size,
        "sha256": regression_digest(data),
        "examples": decoded_examples(data),
    }
    tables = [
        table(
            "first-step",
            "First step, per parameter: the accumulated gradient against the big batch's",
            ["parameter", "accumulated norm", "big-batch norm", "ratio", "max |difference|"],
            first_step,
            note="The big batch holds the same k micro-batches, joined, at the same weights.",
        )
    ]
    return run.outcome(signature, inputs=inputs, tables=tables)


@torch.no_grad()
def training_set_loss(model: nn.Module, data: Regression) -> float:
    return float(F.mse_loss(model(data.features), data.targets))


def step_batches(data: Regression, config: AccumulationConfig, run: Run) -> Iterator[list[Batch]]:
    """The k micro-batches of each step, drawn in order from shuffled epochs."""
    micro = micro_batches(data, config.micro_batch_size, run)
    while True:
        yield [next(micro) for _ in range(config.micro_batches)]


def micro_batches(data: Regression, size: int, run: Run) -> Iterator[Batch]:
    while True:
        order = torch.randperm(len(data), generator=run.order_rng)
        for start in range(0, len(data) - size + 1, size):
            index = order[start : start + size]
            yield data.features[index], data.targets[index]


def accumulate(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    micro: list[Batch],
    accumulation: str,
) -> list[float]:
    """Backward through each micro-batch, adding into .grad: the accumulated gradient. Returns
    each micro-batch's loss as computed (the mean over its B examples)."""
    optimizer.zero_grad(set_to_none=True)
    losses = []
    for x, y in micro:
        loss = F.mse_loss(model(x), y)
        losses.append(loss.item())
        if accumulation == "summed":
            # The loss of each micro-batch is a mean over B examples; added up k times without
            # dividing, the gradient is k times the mean over all k×B of them.
            loss.backward()  # type: ignore[no-untyped-call]
        else:
            (loss / len(micro)).backward()  # type: ignore[no-untyped-call]
    return losses


def big_batch_backward(
    model: nn.Module, optimizer: torch.optim.Optimizer, micro: list[Batch]
) -> float:
    """The reference gradient: one backward through all k micro-batches joined into one."""
    x = torch.cat([features for features, _ in micro])
    y = torch.cat([targets for _, targets in micro])
    optimizer.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), y)
    loss.backward()  # type: ignore[no-untyped-call]
    return loss.item()


def flat_grad(model: nn.Module) -> torch.Tensor:
    """Every parameter's gradient in one float64 vector (sums of squares stay finite longer)."""
    return torch.cat([p.grad.detach().double().flatten() for p in model.parameters()])  # type: ignore[union-attr]


def flat_weights(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().double().flatten() for p in model.parameters()])


def norm(vector: torch.Tensor) -> float:
    return float(vector.norm())


def compare(accumulated: torch.Tensor, big: torch.Tensor) -> Comparison:
    big_norm, both = norm(big), norm(big) * norm(accumulated)
    product = float(accumulated.dot(big))
    difference = accumulated - big
    return Comparison(
        scale=product / big_norm**2 if big_norm > 0 else None,
        cosine=product / both if both > 0 else None,
        max_abs_diff=float(difference.abs().max()),
        relative_diff=norm(difference) / big_norm if big_norm > 0 else None,
    )


def per_parameter_rows(model: nn.Module, twin: nn.Module) -> list[list[Any]]:
    rows = []
    for (name, mine), theirs in zip(model.named_parameters(), twin.parameters(), strict=True):
        assert mine.grad is not None and theirs.grad is not None
        accumulated, big = float(mine.grad.norm()), float(theirs.grad.norm())
        rows.append(
            [
                name,
                accumulated,
                big,
                accumulated / big if big > 0 else None,
                float((mine.grad - theirs.grad).abs().max()),
            ]
        )
    return rows
