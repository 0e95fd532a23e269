"""What the judge reads off one hidden network at the weights init_weights() left, outside
the sandbox: before any update, on the hidden batch, the loss, every hidden layer's activations
and dead units, whether its units differ, and every layer's gradient; then the losses of a copy
trained with the drill's SGD. And the drill's signature filled from such a reading."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from drills.catalog.init_check import TOO_LARGE_RATIO
from drills.catalog.init_check.exercises.sound_start.problem import (
    CASES,
    Problem,
    linears,
    loaded,
    train_losses,
)
from drills.catalog.init_check.signature import InitSignature
from drills.catalog.init_check.train import SATURATED_ABOVE
from drills.core.contract import SignatureValue
from drills.core.curves import tail_mean


@dataclass
class Reading:
    """One hidden network at the weights init_weights() left: step 0, then the trained copy."""

    problem: Problem
    loss: float  # before any update
    logit_size: float  # mean |logit|
    saturated: float  # share of examples whose softmax puts more than 0.99 on one class
    sizes: list[float]  # per hidden layer: RMS of its output over the inputs' RMS
    dead: list[float]  # per hidden layer: share of units that output 0 for every example
    distinct: list[int]  # per hidden layer: how many different units (weights and bias) it has
    grads: list[float]  # per layer, hidden then output: gradient norm of weight and bias
    losses: list[float] = field(default_factory=list)  # the trained copy's, step by step

    @property
    def label(self) -> str:
        return CASES[self.problem.case]

    @property
    def ratio(self) -> float:
        return self.loss / self.problem.shape.chance

    @property
    def ratios(self) -> list[float]:
        """Each layer's gradient norm over the layer above's (the output layer's for the last
        hidden one); 0 under a layer that gets none, as then this one gets none either."""
        pairs = zip(self.grads[:-1], self.grads[1:], strict=True)
        return [below / above if above > 0 else 0.0 for below, above in pairs]

    @property
    def final(self) -> float:
        """The trained copy's mean loss over the last tenth of the steps; NaN if it diverged."""
        settled = tail_mean(self.losses)
        if settled is None or not all(math.isfinite(loss) for loss in self.losses):
            return math.nan
        return settled


def read(problem: Problem, weights: dict[str, torch.Tensor]) -> Reading:
    model = loaded(problem.shape, weights)
    outputs: list[torch.Tensor] = []
    hooks = [
        module.register_forward_hook(lambda _m, _i, out: outputs.append(out.detach()))
        for module in model
        if isinstance(module, torch.nn.ReLU)
    ]
    features, labels = problem.data.features, problem.data.labels
    logits = model(features)
    for hook in hooks:
        hook.remove()
    loss = F.cross_entropy(logits, labels)
    loss.backward()  # type: ignore[no-untyped-call]
    scale = float(features.pow(2).mean().sqrt())
    layers = linears(model)
    reading = Reading(
        problem=problem,
        loss=loss.item(),
        logit_size=float(logits.detach().abs().mean()),
        saturated=float((logits.detach().softmax(-1).amax(-1) > SATURATED_ABOVE).float().mean()),
        sizes=[float(out.pow(2).mean().sqrt()) / scale for out in outputs],
        dead=[float((out == 0).all(dim=0).float().mean()) for out in outputs],
        distinct=[units(layer) for layer in layers[:-1]],
        grads=[gradient_norm(layer) for layer in layers],
    )
    reading.losses = train_losses(model, problem.data)
    return reading


def units(layer: torch.nn.Linear) -> int:
    rows = torch.cat([layer.weight.detach(), layer.bias.detach()[:, None]], dim=1)
    return int(torch.unique(rows, dim=0).shape[0])


def gradient_norm(layer: torch.nn.Linear) -> float:
    grads = [p.grad for p in (layer.weight, layer.bias) if p.grad is not None]
    return math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))


def numbers(r: Reading) -> dict[str, SignatureValue]:
    """What the judge measured on one hidden network, for the judgement's table."""
    found: dict[str, SignatureValue] = {
        f"first loss / ln(C) ({r.label})": r.ratio,
        f"largest activation size ({r.label})": max(r.sizes),
        f"smallest activation size ({r.label})": min(r.sizes),
        f"smallest gradient / layer above ({r.label})": min(r.ratios),
        f"most dead units in a layer ({r.label})": max(r.dead),
        f"trained loss / ln(C) ({r.label})": r.final / r.problem.shape.chance,
    }
    return {
        key: (value if not isinstance(value, float) or math.isfinite(value) else None)
        for key, value in found.items()
    }


def signature_of(r: Reading) -> InitSignature:
    chance = r.problem.shape.chance
    deadest = max(range(len(r.dead)), key=lambda i: r.dead[i])
    finite = [loss for loss in r.losses if math.isfinite(loss)]
    nonfinite = next((step for step, loss in enumerate(r.losses) if not math.isfinite(loss)), None)
    if nonfinite is None and not all(math.isfinite(g) for g in r.grads):
        nonfinite = 0
    return InitSignature(
        classes=r.problem.shape.classes,
        chance_loss=chance,
        too_large_loss=TOO_LARGE_RATIO * chance,
        initial_loss=r.loss if math.isfinite(r.loss) else None,
        initial_loss_ratio=r.ratio if math.isfinite(r.ratio) else None,
        initial_logit_size=r.logit_size,
        initial_saturated_share=r.saturated,
        initial_dead_share=r.dead[deadest],
        deadest_layer=f"hidden{deadest + 1}" if r.dead[deadest] > 0 else None,
        layers_without_gradient=sum(g == 0.0 for g in r.grads),
        initial_first_grad=r.grads[0],
        initial_last_grad=r.grads[-1],
        steps_run=len(finite),
        final_loss=tail_mean(finite),
        max_loss=max(finite, default=None),
        nonfinite_step=nonfinite,
    )
