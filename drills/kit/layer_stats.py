"""Per-layer probes over time: how big each layer's gradient is, how far each optimizer step
moves it, and what its activations look like.

One number for the whole model hides where a problem sits: a total gradient norm can look fine
while the first layer gets nothing. These probes log one series per layer, named
`<probe>@<layer>` so that a chart drawing the prefix `grad@*` shows every layer:

    grad@<layer>          L2 norm of the layer's gradients (weight and bias together)
    update_ratio@<layer>  ||change of the layer's parameters in this step|| / ||parameters before||
    act@<layer>           mean |activation| of the layer's output over the batch
    dead@<layer>          share of the layer's units that output exactly 0 for every example

Use them in the training loop beside the Run:

    grads = LayerGradients(run, {"hidden1": model.hidden1, "output": model.output})
    ...
    loss.backward()
    grads.after_backward(step)   # logs grad@*, remembers the weights before the step
    optimizer.step()
    grads.after_step(step)       # logs update_ratio@*
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from drills.kit.run import Run


class LayerGradients:
    """Gradient norm and update/weight ratio per layer, one point per step each."""

    def __init__(self, run: Run, layers: Mapping[str, nn.Module]) -> None:
        self._run = run
        self._parameters = {name: list(layer.parameters()) for name, layer in layers.items()}
        self._before: dict[str, list[torch.Tensor]] = {}

    def after_backward(self, step: int) -> dict[str, float]:
        """Log each layer's gradient norm (0 where no parameter of it has a gradient) and
        snapshot its weights for `after_step`. Returns the norms, by layer."""
        norms = {}
        for name, parameters in self._parameters.items():
            norm = _norm(p.grad for p in parameters)
            norms[name] = norm
            if math.isfinite(norm):  # a non-finite point is the loop's to stop on, not to plot
                self._run.log(f"grad@{name}", step, norm)
            self._before[name] = [p.detach().clone() for p in parameters]
        return norms

    def after_step(self, step: int) -> dict[str, float]:
        """Log how far each layer moved since `after_backward`, relative to its size.
        Call it where `optimizer.step()` is (or should be), so a missing step shows as 0."""
        ratios = {}
        for name, parameters in self._parameters.items():
            before = self._before.get(name)
            if before is None:
                continue
            change = _norm(p.detach() - old for p, old in zip(parameters, before, strict=True))
            size = _norm(before)
            ratios[name] = change / size if size > 0 else 0.0
            if math.isfinite(ratios[name]):
                self._run.log(f"update_ratio@{name}", step, ratios[name])
        return ratios


class LayerActivations:
    """Mean |activation| and the share of dead units of chosen layers' outputs, per step.

    Forward hooks keep the latest output of each watched module; `log(step)` summarises it.
    Watch the module whose output you mean (for a ReLU layer, the ReLU, not the Linear before it).
    Outputs are read as (batch, units).
    """

    def __init__(self, run: Run, modules: Mapping[str, nn.Module]) -> None:
        self._run = run
        self._latest: dict[str, torch.Tensor] = {}
        self._handles = [
            module.register_forward_hook(self._keep(name)) for name, module in modules.items()
        ]

    def log(self, step: int) -> dict[str, dict[str, float]]:
        """Log `act@<layer>` and `dead@<layer>` for the last forward pass; return them."""
        stats = {}
        for name, output in self._latest.items():
            mean_abs = float(output.abs().mean())
            dead = float((output == 0).all(dim=0).float().mean())
            stats[name] = {"mean_abs": mean_abs, "dead_share": dead}
            if math.isfinite(mean_abs):
                self._run.log(f"act@{name}", step, mean_abs)
            self._run.log(f"dead@{name}", step, dead)
        return stats

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _keep(self, name: str) -> Any:
        def hook(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
            self._latest[name] = output.detach().flatten(1)

        return hook


def _norm(tensors: Any) -> float:
    """L2 norm of several tensors taken together; None entries (no gradient) count as zero."""
    norms = [float(torch.linalg.vector_norm(t.detach())) for t in tensors if t is not None]
    return math.hypot(*norms)
