"""The training loop of the learning-rate sweep: one run per rate, from the same start.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.lr_sweep.evidence import RateRun, describe_inputs, rates_table
from drills.catalog.lr_sweep.problem import (
    SweepConfig,
    TanhMLP,
    make_optimizer,
    make_problem,
    top_hessian_eigenvalue,
    update_norm,
    weights_norm,
)
from drills.catalog.lr_sweep.signature import LrSweepSignature
from drills.catalog.lr_sweep.verdicts import FALLS, FLAT, SLOTS, UNSTABLE, rate_verdict
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.audit import total_grad_norm
from drills.kit.run import Run


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train once per rate from the same weights on the same data; see LrSweep."""
    config = SweepConfig()
    optimizer_name: str = knobs["optimizer"]
    clearing: str = knobs["zero_grad"]
    holds: str = knobs["optimizer_holds"]
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
        sweep.append(
            train_one_rate(run, model, optimizer_name, lr, loss_fn, config, clearing, holds)
        )

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
    clearing: str = "before-backward",
    holds: str = "the-model",
) -> RateRun:
    """One rate's run; its curves go into the Run as "loss@lr=...", "grad_norm@lr=...", ..."""
    parameters = list(model.parameters())
    stepped = parameters
    if holds == "a-copy":
        # The optimizer built on a copy of the model (as a deepcopy made after it, for an
        # average of the weights, would leave it): it steps tensors no forward pass uses.
        stepped = list(copy.deepcopy(model).parameters())
    optimizer = make_optimizer(optimizer_name, stepped, lr)
    run.watch(model, optimizer)  # a fresh audit for this rate
    loss_name, grad_name, update_name = (
        f"{metric}@lr={lr!r}" for metric in ("loss", "grad_norm", "update_norm")
    )
    update_ratios: list[float] = []
    nonfinite_step = None  # this rate's own: run.nonfinite_step keeps only the sweep's first
    gradless_steps = 0
    for step in range(config.steps):
        loss = loss_fn()
        if run.stop_if_nonfinite(step, loss.item()):
            nonfinite_step = step  # overflowed: stop this rate rather than plot NaN
            break
        if clearing == "before-backward":
            optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        grad_norm = total_grad_norm(parameters)
        if run.stop_if_nonfinite(step, grad_norm):
            nonfinite_step = step
            break
        if clearing == "after-backward":
            # Cleared between backward and step: the gradient was there to measure, and the
            # optimizer steps on none (a parameter without .grad is skipped).
            optimizer.zero_grad(set_to_none=True)
        # What the optimizer is about to step on: no gradient at all is the loop's fault,
        # whatever the rate (a tiny rate still finds one; its step may round to zero).
        if not any(p.grad is not None and bool(p.grad.any()) for p in parameters):
            gradless_steps += 1
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
        gradless_steps=gradless_steps,
        holds_the_model=any(p is q for p in parameters for q in stepped),
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
    # A rate whose every step found no gradient never acted, however large it was.
    signature.gradless_count = sum(
        rate.gradless_steps > 0 and rate.gradless_steps == len(rate.update_norms) for rate in sweep
    )
    signature.outside_optimizer_count = sum(not rate.holds_the_model for rate in sweep)
    signature.smallest_unstable_lr = min(unstable) if unstable else None
    return signature
