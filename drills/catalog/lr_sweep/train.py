"""The training loop of the learning-rate sweep: one run per rate, from the same start.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import copy
import hashlib
import math
import statistics
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.lr_sweep.signature import LrSweepSignature
from drills.catalog.lr_sweep.verdicts import FALLS, FLAT, SLOTS, UNSTABLE, rate_verdict
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.audit import total_grad_norm
from drills.kit.run import Run
from drills.kit.tables import Cell, table


@dataclass(frozen=True)
class SweepConfig:
    examples: int = 64  # the whole data set is one batch: every step sees the same data
    features: int = 8
    hidden: int = 32
    steps: int = 150  # per rate
    noise: float = 0.1  # std of the noise added to the targets
    # Inputs of unit scale make the loss curved enough that plain gradient descent at a rate
    # of 1 overshoots and overflows, while 1e-2 is stable: the sweep brackets the limit.
    input_scale: float = 1.0
    power_iterations: int = 30  # for the sharpness estimate


@dataclass
class RateRun:
    """Everything one rate's run produced (its curves are also in the Run, named by the rate)."""

    lr: float
    losses: list[float]  # one per step taken
    grad_norms: list[float]
    update_norms: list[float]  # finite steps only: an overflowing step shows up as the next loss
    update_ratios: list[float]  # step size / weight size
    final_loss: float  # mean of the last 10% of the finite losses
    max_loss: float
    nonfinite_step: int | None  # where it overflowed and stopped
    audit_rows: list[dict[str, Any]]


class TanhMLP(nn.Module):
    def __init__(self, config: SweepConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.Tanh(),
            nn.Linear(config.hidden, config.hidden),
            nn.Tanh(),
            nn.Linear(config.hidden, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]


def make_problem(
    config: SweepConfig, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets from the run's data generator: every rate sees exactly this data."""
    x = config.input_scale * torch.randn(config.examples, config.features, generator=generator)
    teacher = torch.randn(config.features, 1, generator=generator) / math.sqrt(config.features)
    clean = 2.0 * torch.tanh(x @ teacher)
    y = clean + config.noise * torch.randn(config.examples, 1, generator=generator)
    return x, y


def make_optimizer(
    name: str, parameters: Sequence[nn.Parameter], lr: float
) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.Adam(parameters, lr=lr)
    return torch.optim.SGD(parameters, lr=lr)


def update_norm(before: Sequence[torch.Tensor], after: Sequence[torch.Tensor]) -> float:
    """L2 norm of the change of all parameters together: how big one optimizer step was."""
    change = torch.cat([(a - b).flatten() for a, b in zip(after, before, strict=True)])
    return float(torch.linalg.vector_norm(change))


def weights_norm(parameters: Sequence[torch.Tensor]) -> float:
    return float(torch.linalg.vector_norm(torch.cat([p.flatten() for p in parameters])))


def top_hessian_eigenvalue(
    loss_fn: Callable[[], torch.Tensor],
    parameters: Sequence[nn.Parameter],
    iterations: int,
    generator: torch.Generator,
) -> float:
    """The largest curvature of the loss (top Hessian eigenvalue), by power iteration.

    Each iteration multiplies a direction by the Hessian without ever building it (a second
    backward pass through the gradient); the direction turns towards the steepest curvature.
    Plain gradient descent on a quadratic with that curvature is stable only for lr < 2 / it.
    """
    direction = [torch.randn(p.shape, generator=generator) for p in parameters]
    eigenvalue = 0.0
    for _ in range(iterations):
        norm = math.sqrt(sum(float(d.pow(2).sum()) for d in direction))
        direction = [d / norm for d in direction]
        grads = torch.autograd.grad(loss_fn(), parameters, create_graph=True)
        hessian_times = torch.autograd.grad(grads, parameters, grad_outputs=direction)
        eigenvalue = sum(
            float((h * d).sum()) for h, d in zip(hessian_times, direction, strict=True)
        )
        direction = [h.detach() for h in hessian_times]
    return eigenvalue


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train once per rate from the same weights on the same data; see LrSweep."""
    config = SweepConfig()
    optimizer_name: str = knobs["optimizer"]
    rates = sorted(knobs["lrs"])  # smallest first: the table and the slots read in order
    run = Run(seed, report)
    x, y = make_problem(config, run.data_rng)
    model = TanhMLP(config)  # initial weights come from the runner's torch.manual_seed(seed)
    initial_state = copy.deepcopy(model.state_dict())

    def loss_fn() -> torch.Tensor:
        return F.mse_loss(model(x), y)

    # The power iteration's starting direction has a stream of its own, seeded like the data,
    # so the estimate does not depend on how many numbers the data took.
    probe_rng = torch.Generator().manual_seed(run.seed)
    parameters = list(model.parameters())
    sharpness = top_hessian_eigenvalue(loss_fn, parameters, config.power_iterations, probe_rng)

    sweep = []
    for lr in rates:
        model.load_state_dict(initial_state)  # every rate starts from the very same weights
        sweep.append(train_one_rate(run, model, optimizer_name, lr, loss_fn, config))

    initial_loss = sweep[0].losses[0]
    signature = summarise(sweep, initial_loss, config)
    signature.optimizer = optimizer_name
    signature.target_variance = float(y.var(correction=0))
    signature.sharpness = sharpness
    # The limit is a property of plain gradient descent; Adam rescales every step.
    if optimizer_name == "sgd" and sharpness > 0:
        signature.stability_limit = 2.0 / sharpness
    return run.outcome(
        signature,
        inputs=describe_inputs(x, y, config),
        # One audit per rate (the Run's own holds the last rate only), each row named by its rate.
        parameters=[
            {**row, "name": f"lr={rate.lr!r}: {row['name']}"}
            for rate in sweep
            for row in rate.audit_rows
        ],
        tables=[rates_table(sweep, initial_loss)],
    )


def train_one_rate(
    run: Run,
    model: nn.Module,
    optimizer_name: str,
    lr: float,
    loss_fn: Callable[[], torch.Tensor],
    config: SweepConfig,
) -> RateRun:
    """One rate's run; its curves go into the Run as "loss@lr=...", "grad_norm@lr=...", ..."""
    parameters = list(model.parameters())
    optimizer = make_optimizer(optimizer_name, parameters, lr)
    run.watch(model, optimizer)  # a fresh audit for this rate
    loss_name, grad_name, update_name = (
        f"{metric}@lr={lr!r}" for metric in ("loss", "grad_norm", "update_norm")
    )
    update_ratios: list[float] = []
    nonfinite_step = None  # this rate's own: run.nonfinite_step keeps only the sweep's first
    for step in range(config.steps):
        loss = loss_fn()
        if run.stop_if_nonfinite(step, loss.item()):
            nonfinite_step = step  # overflowed: stop this rate rather than plot NaN
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        grad_norm = total_grad_norm(parameters)
        if run.stop_if_nonfinite(step, grad_norm):
            nonfinite_step = step
            break
        before = [p.detach().clone() for p in parameters]
        optimizer.step()
        step_size = update_norm(before, [p.detach() for p in parameters])

        run.log(loss_name, step, loss.item())
        run.log(grad_name, step, grad_norm)
        if math.isfinite(step_size):  # an overflowing step shows up as the next loss
            update_ratios.append(step_size / weights_norm(before))
            run.log(update_name, step, step_size)

    final_loss = run.tail_mean(loss_name)
    assert final_loss is not None  # the first loss is finite: same weights and data for every rate
    return RateRun(
        lr,
        losses=run.values(loss_name),
        grad_norms=run.values(grad_name),
        update_norms=run.values(update_name),
        update_ratios=update_ratios,
        final_loss=final_loss,
        max_loss=max(run.values(loss_name)),
        nonfinite_step=nonfinite_step,
        audit_rows=run.parameter_rows(),
    )


def summarise(
    sweep: Sequence[RateRun], initial_loss: float, config: SweepConfig
) -> LrSweepSignature:
    signature = LrSweepSignature(lr_count=len(sweep), steps=config.steps, initial_loss=initial_loss)
    found: list[tuple[float, str, float]] = []  # (lr, verdict, final loss)
    for slot, rate in zip(SLOTS, sweep, strict=False):
        verdict = rate_verdict(initial_loss, rate.final_loss, rate.max_loss, rate.nonfinite_step)
        found.append((rate.lr, verdict, rate.final_loss))
        signature.fill_slot(
            slot,
            lr=rate.lr,
            final_loss=rate.final_loss,
            loss_drop=(initial_loss - rate.final_loss) / initial_loss,
            max_loss=rate.max_loss,
            nonfinite_step=rate.nonfinite_step,
        )
    stable = [(lr, final) for lr, verdict, final in found if verdict not in UNSTABLE]
    unstable = [lr for lr, verdict, _ in found if verdict in UNSTABLE]
    if stable:
        signature.best_lr, signature.best_final_loss = min(stable, key=lambda pair: pair[1])
        signature.largest_stable_lr = max(lr for lr, _ in stable)
    signature.flat_count = sum(verdict == FLAT for _, verdict, _ in found)
    signature.falling_count = sum(verdict == FALLS for _, verdict, _ in found)
    signature.unstable_count = len(unstable)
    signature.smallest_unstable_lr = min(unstable) if unstable else None
    return signature


def rates_table(sweep: Sequence[RateRun], initial_loss: float) -> dict[str, Any]:
    rows: list[list[Cell]] = []
    for rate in sweep:
        rows.append(
            [
                rate.lr,
                rate_verdict(initial_loss, rate.final_loss, rate.max_loss, rate.nonfinite_step),
                rate.final_loss,
                (initial_loss - rate.final_loss) / initial_loss,
                rate.max_loss,
                rate.nonfinite_step,
                statistics.median(rate.grad_norms),
                statistics.median(rate.update_norms) if rate.update_norms else None,
                statistics.median(rate.update_ratios) if rate.update_ratios else None,
            ]
        )
    return table(
        "rates",
        "One row per learning rate",
        (
            "learning rate",
            "the loss",
            "final loss",
            "relative drop",
            "highest loss",
            "non-finite at step",
            "median gradient norm",
            "median step size",
            "median step / weights",
        ),
        rows,
        note=(
            f"Every rate started from the same weights at loss {initial_loss:.4g}. 'flat': "
            "fell by less than 10%; 'spikes': rose above 1.5x the starting loss or ended "
            "higher; 'non-finite': overflowed, the run stopped there."
        ),
    )


def tensor_digest(*tensors: torch.Tensor) -> str:
    sha = hashlib.sha256()
    for tensor in tensors:
        flat = tensor.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}f", *flat))
    return sha.hexdigest()


def describe_inputs(x: torch.Tensor, y: torch.Tensor, config: SweepConfig) -> dict[str, Any]:
    return {
        "shapes": {"inputs": list(x.shape), "targets": list(y.shape)},
        "sha256": tensor_digest(x, y),
        "examples": [
            {
                "features_first4": [round(v, 3) for v in x[i, :4].tolist()],
                "target": round(float(y[i]), 3),
            }
            for i in range(3)
        ],
        "note": (
            f"targets = 2 tanh(x . w) + noise (std {config.noise}) for a hidden random w; the "
            f"whole set of {config.examples} examples is the batch of every step"
        ),
    }
