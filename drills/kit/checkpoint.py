"""In-memory checkpoints: the model's and the optimizer's state, frozen at one step.

Replaying a step from a checkpoint separates a bad batch from a bad trajectory: restore the
state from just before the step, feed it the suspect batch, then a normal one, and compare.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


@dataclass(frozen=True)
class Checkpoint:
    step: int  # the step that runs next from this state
    model_state: dict[str, Any]
    optimizer_state: dict[str, Any]


def take_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, step: int) -> Checkpoint:
    # state_dict() returns the live tensors, not copies: without the deep copy the checkpoint
    # would keep moving with every later optimizer step.
    return Checkpoint(
        step=step,
        model_state=copy.deepcopy(model.state_dict()),
        optimizer_state=copy.deepcopy(optimizer.state_dict()),
    )


def restore(model: nn.Module, optimizer: torch.optim.Optimizer, checkpoint: Checkpoint) -> None:
    """Put the model and the optimizer back to the checkpoint; the checkpoint stays reusable."""
    model.load_state_dict(checkpoint.model_state)  # copies into the existing parameters
    # Optimizer.load_state_dict keeps the given state tensors (e.g. Adam's moment estimates)
    # and later updates them in place: hand it a copy, or the checkpoint changes on the next step.
    optimizer.load_state_dict(copy.deepcopy(checkpoint.optimizer_state))
