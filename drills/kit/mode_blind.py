"""Dropout and input noise written so that they ignore the model's mode: `model.eval()`
switches neither off. A classic way to build the randomness into the model by mistake.

They draw from torch's global generator exactly as the mode-aware layers do while training, so
a model built with them trains step for step as one built with `nn.Dropout` and `InputNoise`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ModeBlindDropout(nn.Dropout):
    """Dropout through the functional form with `training` left at its default, True: it drops
    units in eval mode too. (nn.Dropout passes self.training; this is the bug.)"""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, self.p)


class ModeBlindNoise(nn.Module):
    """An input-noise layer that never asks self.training: it adds noise in eval mode too."""

    def __init__(self, std: float) -> None:
        super().__init__()
        self.std = std

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.std > 0:  # as the mode-aware layer, no noise asked draws nothing
            return x + self.std * torch.randn_like(x)
        return x


def repeats_in_eval_mode(
    model: nn.Module, inputs: torch.Tensor, first: torch.Tensor | None = None
) -> bool:
    """Whether the model in eval mode answers the inputs bit for bit alike twice: not when its
    dropout or noise ignores eval mode. `first` is an eval-mode answer already computed, which
    spares a pass; NaN answers count as alike (the same answer). The passes draw from a copy
    of torch's generator, so nothing they draw reaches training."""
    model.eval()
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        if first is None:
            first = model(inputs)
        return bool(torch.allclose(first, model(inputs), rtol=0.0, atol=0.0, equal_nan=True))
