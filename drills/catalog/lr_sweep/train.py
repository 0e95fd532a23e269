"""The training loop of the learning-rate sweep: one run per rate, from the same start.

Kept apart from the drill's description (drills/lr_sweep.py) so that only a worker process
that actually trains imports torch.
"""

from __future__ import annotations

import copy
import hashlib
import math
import statistics
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.lr_sweep.verdicts import (
    FALLS,
    FLAT,
    SLOT_FIELDS,
    SLOTS,
    UNSTABLE,
    rate_verdict,
    slot_key,
)
from drills.core.contract import DrillOutcome, Reporter, SignatureValue
from drills.kit.audit import ParameterAudit, total_grad_norm
from drills.kit.curves import tail_mean
from drills.kit.tables import Cell, table

SIGNATURE_KEYS = (
    "optimizer",
    "lr_count",
    "steps",
    "initial_loss",
    "target_variance",
    "best_lr",
    "best_final_loss",
    "flat_count",
    "falling_count",
    "unstable_count",
    "largest_stable_lr",
    "smallest_unstable_lr",
    "sharpness",
    "stability_limit",
) + tuple(slot_key(name, slot) for slot in SLOTS for name in SLOT_FIELDS)


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
    """Everything one rate's run produced."""

    lr: float
    losses: list[float] = field(default_factory=list)
    grad_norms: list[float] = field(default_factory=list)
    update_norms: list[float] = field(default_factory=list)
    update_ratios: list[float] = field(default_factory=list)  # step size / weight size
    nonfinite_step: int | None = None
    audit_rows: list[dict[str, Any]] = field(default_factory=list)


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


def make_problem(config: SweepConfig, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets from a private generator: every rate sees exactly this data."""
    generator = torch.Generator().manual_seed(seed)
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
    seed: int,
) -> float:
    """The largest curvature of the loss (top Hessian eigenvalue), by power iteration.

    Each iteration multiplies a direction by the Hessian without ever building it (a second
    backward pass through the gradient); the direction turns towards the steepest curvature.
    Plain gradient descent on a quadratic with that curvature is stable only for lr < 2 / it.
    """
    generator = torch.Generator().manual_seed(seed)
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
    x, y = make_problem(config, seed)
    model = TanhMLP(config)  # initial weights come from the runner's torch.manual_seed(seed)
    initial_state = copy.deepcopy(model.state_dict())

    def loss_fn() -> torch.Tensor:
        return F.mse_loss(model(x), y)

    parameters = list(model.parameters())
    sharpness = top_hessian_eigenvalue(loss_fn, parameters, config.power_iterations, seed)

    runs = []
    for lr in rates:
        model.load_state_dict(initial_state)  # every rate starts from the very same weights
        runs.append(train_one_rate(model, optimizer_name, lr, loss_fn, config, report))

    initial_loss = runs[0].losses[0]
    signature = summarise(runs, initial_loss, config)
    signature |= {
        "optimizer": optimizer_name,
        "target_variance": float(y.var(correction=0)),
        "sharpness": sharpness,
        # The limit is a property of plain gradient descent; Adam rescales every step.
        "stability_limit": 2.0 / sharpness if optimizer_name == "sgd" and sharpness > 0 else None,
    }
    diagnostics = {
        "parameters": [
            {**row, "name": f"lr={run.lr!r}: {row['name']}"}
            for run in runs
            for row in run.audit_rows
        ],
        "tables": [rates_table(runs, initial_loss)],
    }
    return DrillOutcome(signature, diagnostics, describe_inputs(x, y, config))


def train_one_rate(
    model: nn.Module,
    optimizer_name: str,
    lr: float,
    loss_fn: Callable[[], torch.Tensor],
    config: SweepConfig,
    report: Reporter,
) -> RateRun:
    parameters = list(model.parameters())
    optimizer = make_optimizer(optimizer_name, parameters, lr)
    audit = ParameterAudit(model, optimizer)
    run = RateRun(lr)
    for step in range(config.steps):
        loss = loss_fn()
        if not math.isfinite(loss.item()):
            run.nonfinite_step = step  # overflowed: stop this rate rather than plot NaN
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        audit.after_backward()
        grad_norm = total_grad_norm(parameters)
        if not math.isfinite(grad_norm):
            run.nonfinite_step = step
            break
        before = [p.detach().clone() for p in parameters]
        optimizer.step()
        step_size = update_norm(before, [p.detach() for p in parameters])

        run.losses.append(loss.item())
        run.grad_norms.append(grad_norm)
        report.metric(f"loss@lr={lr!r}", step, loss.item())
        report.metric(f"grad_norm@lr={lr!r}", step, grad_norm)
        if math.isfinite(step_size):  # an overflowing step shows up as the next loss
            run.update_norms.append(step_size)
            run.update_ratios.append(step_size / weights_norm(before))
            report.metric(f"update_norm@lr={lr!r}", step, step_size)
    run.audit_rows = audit.rows()
    return run


def summarise(
    runs: Sequence[RateRun], initial_loss: float, config: SweepConfig
) -> dict[str, SignatureValue]:
    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    signature |= {"lr_count": len(runs), "steps": config.steps, "initial_loss": initial_loss}
    found: list[tuple[float, str, float]] = []  # (lr, verdict, final loss)
    for slot, run in zip(SLOTS, runs, strict=False):
        final, peak = final_loss(run), max(run.losses)
        verdict = rate_verdict(initial_loss, final, peak, run.nonfinite_step)
        found.append((run.lr, verdict, final))
        signature |= {
            slot_key("lr", slot): run.lr,
            slot_key("final_loss", slot): final,
            slot_key("loss_drop", slot): (initial_loss - final) / initial_loss,
            slot_key("max_loss", slot): peak,
            slot_key("nonfinite_step", slot): run.nonfinite_step,
        }
    stable = [(lr, final) for lr, verdict, final in found if verdict not in UNSTABLE]
    unstable = [lr for lr, verdict, _ in found if verdict in UNSTABLE]
    if stable:
        best_lr, best_final = min(stable, key=lambda pair: pair[1])
        signature |= {
            "best_lr": best_lr,
            "best_final_loss": best_final,
            "largest_stable_lr": max(lr for lr, _ in stable),
        }
    signature |= {
        "flat_count": sum(verdict == FLAT for _, verdict, _ in found),
        "falling_count": sum(verdict == FALLS for _, verdict, _ in found),
        "unstable_count": len(unstable),
        "smallest_unstable_lr": min(unstable) if unstable else None,
    }
    return signature


def final_loss(run: RateRun) -> float:
    # Mean of the last 10% of the finite losses: for an overflowing rate, where it was heading.
    value = tail_mean(run.losses)
    assert value is not None  # the first loss is finite: same weights and data for every rate
    return value


def rates_table(runs: Sequence[RateRun], initial_loss: float) -> dict[str, Any]:
    rows: list[list[Cell]] = []
    for run in runs:
        final, peak = final_loss(run), max(run.losses)
        rows.append(
            [
                run.lr,
                rate_verdict(initial_loss, final, peak, run.nonfinite_step),
                final,
                (initial_loss - final) / initial_loss,
                peak,
                run.nonfinite_step,
                statistics.median(run.grad_norms),
                statistics.median(run.update_norms) if run.update_norms else None,
                statistics.median(run.update_ratios) if run.update_ratios else None,
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
