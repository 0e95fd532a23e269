"""The training loop of "Check the initialisation": a small ReLU MLP started from a chosen init.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.init_check import TOO_LARGE_RATIO
from drills.catalog.init_check.signature import InitSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.audit import total_grad_norm
from drills.kit.layer_stats import LayerActivations, LayerGradients
from drills.kit.run import Run
from drills.kit.synthetic_classification import (
    TeacherTask,
    decoded_examples,
    draw_set,
    make_teacher,
    sets_digest,
)

HIDDEN_LAYERS = ("hidden1", "hidden2", "hidden3")
LAYERS = (*HIDDEN_LAYERS, "output")
SATURATED_ABOVE = 0.99  # a softmax row whose top probability exceeds this is saturated


@dataclass(frozen=True)
class InitConfig:
    init: str = "default"  # which initialisation (see INITS in __init__.py)
    lr: float = 0.1  # SGD: the step follows the gradient's size, so a bad scale shows directly
    momentum: float = 0.9
    steps: int = 100  # full-batch steps
    features: int = 16  # input width
    classes: int = 10  # more classes make ln(C) a clearer reference
    hidden: int = 64  # width of each hidden layer
    examples: int = 256  # the one training batch
    large_factor: float = 10.0  # "too-large": every weight times this
    small_factor: float = 1e-3  # "too-small": every weight times this
    dead_bias: float = -5.0  # "dead-relu": hidden2's bias, far below any pre-activation
    wide_bias_std: float = 1.0  # "wide-bias": every hidden bias drawn at this spread


def build_model(config: InitConfig) -> nn.Sequential:
    widths = [config.features] + [config.hidden] * len(HIDDEN_LAYERS)
    modules: OrderedDict[str, nn.Module] = OrderedDict()
    for index, name in enumerate(HIDDEN_LAYERS):
        modules[name] = nn.Linear(widths[index], widths[index + 1])
        modules[f"relu{index + 1}"] = nn.ReLU()
    modules["output"] = nn.Linear(config.hidden, config.classes)
    return nn.Sequential(modules)


@torch.no_grad()
def apply_init(model: nn.Sequential, config: InitConfig) -> None:
    """Change PyTorch's default initialisation as the chosen variant says."""
    linears = [getattr(model, name) for name in LAYERS]
    if config.init in ("too-large", "too-small"):
        factor = config.large_factor if config.init == "too-large" else config.small_factor
        for layer in linears:
            layer.weight.mul_(factor)
            # Zero biases, as most init schemes set them: left at their default size, tiny
            # weights would let the biases alone decide which units fire (another story).
            layer.bias.zero_()
    elif config.init == "dead-relu":
        # e.g. a bias "initialised" with the wrong sign and scale: every pre-activation of
        # hidden2 is negative for every input, so its ReLUs output 0 and pass back 0.
        hidden2 = model.get_submodule("hidden2")
        assert isinstance(hidden2, nn.Linear)
        hidden2.bias.fill_(config.dead_bias)
    elif config.init == "wide-bias":
        # e.g. nn.init.normal_(bias) over every layer: its default spread, 1, is far wider than
        # a pre-activation's (about 0.6 here), so every unit whose bias fell well below zero
        # stays silent on every input, and one whose bias is large fires on every input.
        for name in HIDDEN_LAYERS:
            layer = model.get_submodule(name)
            assert isinstance(layer, nn.Linear)
            layer.bias.normal_(0.0, config.wide_bias_std)


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train from the chosen initialisation; see InitCheck."""
    config = InitConfig(init=knobs["init"], lr=knobs["lr"], steps=knobs["steps"])
    run = Run(seed, report)
    task = TeacherTask(features=config.features, classes=config.classes)
    data = draw_set(task, make_teacher(task, run.data_rng), config.examples, run.data_rng)

    model = build_model(config)
    apply_init(model, config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum)
    run.watch(model, optimizer)
    gradients = LayerGradients(run, {name: getattr(model, name) for name in LAYERS})
    # A hidden layer's activations are its ReLU's output (a dead unit outputs exactly 0).
    relus = {name: getattr(model, f"relu{i + 1}") for i, name in enumerate(HIDDEN_LAYERS)}
    activations = LayerActivations(run, relus)
    chance = math.log(config.classes)
    signature = InitSignature(
        classes=config.classes, chance_loss=chance, too_large_loss=TOO_LARGE_RATIO * chance
    )

    for step in range(config.steps):
        logits = model(data.features)
        loss = F.cross_entropy(logits, data.labels)
        if run.stop_if_nonfinite(step, loss.item()):
            break  # diverged: stop rather than plot NaN
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        if run.stop_if_nonfinite(step, total_grad_norm(model.parameters())):
            break
        layer_grads = gradients.after_backward(step)
        layer_acts = activations.log(step)
        optimizer.step()
        gradients.after_step(step)

        # The logits' size is what saturates the softmax: plotted beside the hidden layers.
        logit_size = float(logits.detach().abs().mean())
        saturated = float((logits.detach().softmax(-1).amax(-1) > SATURATED_ABOVE).float().mean())
        run.log("loss", step, loss.item())
        run.log("act@logits", step, logit_size)
        run.log("saturated", step, saturated)
        if step == 0:
            read_step_zero(signature, loss.item(), logit_size, saturated, layer_grads, layer_acts)
    activations.close()

    signature.steps_run = len(run.values("loss"))
    signature.final_loss = run.tail_mean("loss")
    signature.max_loss = max(run.values("loss"), default=None)
    signature.nonfinite_step = run.nonfinite_step
    inputs = {
        "shapes": {"features": list(data.features.shape), "labels": list(data.labels.shape)},
        "sha256": sets_digest(data),
        "examples": decoded_examples(data),
    }
    return run.outcome(signature, inputs=inputs)


def read_step_zero(
    signature: InitSignature,
    loss: float,
    logit_size: float,
    saturated: float,
    grads: dict[str, float],
    acts: dict[str, dict[str, float]],
) -> None:
    """The init check proper: everything measured before the first update."""
    assert signature.chance_loss is not None
    signature.initial_loss = loss
    signature.initial_loss_ratio = loss / signature.chance_loss
    signature.initial_saturated_share = saturated
    signature.initial_logit_size = logit_size
    dead = {name: acts[name]["dead_share"] for name in HIDDEN_LAYERS}
    deadest = max(dead, key=lambda name: dead[name])
    signature.initial_dead_share = dead[deadest]
    signature.deadest_layer = deadest if dead[deadest] > 0 else None
    signature.layers_without_gradient = sum(norm == 0.0 for norm in grads.values())
    signature.initial_first_grad = grads[LAYERS[0]]
    signature.initial_last_grad = grads[LAYERS[-1]]
