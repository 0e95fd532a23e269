"""The plain training loop both tasks of "Loss vs metric" share, and the entropy of a mix."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import torch
from torch import nn

from drills.catalog.loss_vs_metric.signature import LossVsMetricSignature
from drills.kit.audit import relative_weight_change
from drills.kit.run import Run


class LoopConfig(Protocol):
    """What the loop reads of either task's config."""

    @property
    def lr(self) -> float: ...

    @property
    def steps(self) -> int: ...


def fit(
    run: Run,
    model: nn.Module,
    config: LoopConfig,
    next_batch: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    loss_of: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    evaluate: Callable[[], dict[str, float]],
) -> LossVsMetricSignature:
    """The plain loop both tasks share: a fresh batch per step, then the metrics on a fixed set.

    Returns the signature with the numbers about training filled in; each task adds its own.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    for step in range(config.steps):
        inputs, targets = next_batch()
        loss = loss_of(model(inputs), targets)
        if run.stop_if_nonfinite(step, loss.item()):
            break  # stop rather than plot NaN
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        run.log("loss", step, loss.item())
        with torch.no_grad():
            for name, value in evaluate().items():
                run.log(name, step, value)
    return LossVsMetricSignature(
        steps_run=len(run.values("loss")),
        initial_loss=run.first("loss"),
        final_loss=run.tail_mean("loss"),
        initial_eval_loss=run.first("eval_loss"),
        eval_loss=run.tail_mean("eval_loss"),
        weight_change=relative_weight_change(run.parameter_rows()),
        nonfinite_step=run.nonfinite_step,
    )


def entropy(probabilities: list[float]) -> float:
    return -sum(p * math.log(p) for p in probabilities if p > 0)
