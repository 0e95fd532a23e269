"""What a run of "Break the graph" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class BreakSignature(Signature):
    # Upstream: the backbone, before the cut; downstream: the head, after it.
    upstream_params: int | None = None  # parameter tensors in the backbone
    upstream_grad_none: int | None = None  # ... whose .grad stayed None
    upstream_updated: int | None = None  # ... that moved at all
    upstream_update_norm: float | None = None  # L2 norm of the backbone's total change
    downstream_params: int | None = None  # parameter tensors in the head
    downstream_grad_none: int | None = None
    downstream_updated: int | None = None
    downstream_update_norm: float | None = None
    output_has_grad_fn: bool | None = None  # the logits were recorded in a graph
    loss_has_grad_fn: bool | None = None  # backward has something to follow
    steps_run: int | None = None  # 0 when the first loss had no graph
    initial_loss: float | None = None
    final_loss: float | None = None  # mean of the last 10% of steps
    chance_loss: float | None = None  # ln(classes): a model that knows nothing
