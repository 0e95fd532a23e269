"""What a harness works with inside the sandbox: the learner's `report` callable, and what one
hidden run hands back to the entry module (drills/exercises/inside.py).

A harness module (an exercise's `harness.py`) provides

    run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput

building the data and the model from `seed` with trusted code, calling the learner's
function(s) on them, and returning what the judge measures: the model's weights afterwards, and
whatever the functions returned. It runs in the same process as the learner's code, so none of
it is trusted outside: the judge rebuilds and re-measures everything from the seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from drills.exercises.contract import ContractError

# What the learner's training loop calls to draw its live curve: report("loss", step, value).
Report = Callable[[str, int, float], None]


@dataclass
class CaseOutput:
    weights: dict[str, torch.Tensor]  # sent as the blob "weights-<case>"
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)  # the blob "values-<case>"
    # Plain numbers the learner's function returned: name -> (value, what it was, in words).
    numbers: dict[str, tuple[float | None, str]] = field(default_factory=dict)


def state_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A model's weights as plain tensors, ready to serialize."""
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


def as_number(returned: object) -> tuple[float | None, str]:
    """What a function handed back as a number, and what it was, in words: a Python number or a
    one-element tensor off the graph is a number; anything else is described, not converted."""
    if isinstance(returned, bool):
        return None, "bool"
    if isinstance(returned, int | float):
        value = float(returned)
        return (value if math.isfinite(value) else None), type(returned).__name__
    if isinstance(returned, torch.Tensor):
        described = f"Tensor of shape {list(returned.shape)}"
        if returned.requires_grad:
            return None, f"{described} attached to a graph (requires_grad=True)"
        if returned.numel() != 1 or not returned.is_floating_point():
            return None, described
        value = float(returned.item())
        return (value if math.isfinite(value) else None), described
    return None, type(returned).__name__


def labels_tensor(returned: object, like: torch.Tensor, function: str) -> torch.Tensor:
    """The learner's returned labels, if they are an integer tensor shaped like `like`."""
    if not isinstance(returned, torch.Tensor):
        raise ContractError(f"{function} returned {type(returned).__name__}, not a tensor")
    if tuple(returned.shape) != tuple(like.shape):
        raise ContractError(
            f"{function} returned labels of shape {list(returned.shape)}; "
            f"they must have the shape of input_ids, {list(like.shape)}"
        )
    if returned.is_floating_point() or returned.is_complex() or returned.dtype == torch.bool:
        raise ContractError(f"{function} returned {returned.dtype} labels; use integer token ids")
    return returned.detach().to(torch.int64).clone()
