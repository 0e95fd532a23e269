"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data and the model are the drill's own
(drills/catalog/mixed_precision/): a tanh MLP regressing a smooth target, batches of 32.

Three hidden runs, each with the GradScaler the harness hands the learner's train():
- "scale 2^10": the drill's problem and its first scale, at which nothing overflows;
- "late in training": the targets are the initial model's own outputs plus a small smooth
  change, so the loss starts near 1e-9 and the gradients are so small that float16 loses them
  unless the loss is scaled (the scaler's reason to be); first scale 2^16, GradScaler's default;
- "scale 2^24": the drill's problem with a first scale far too large: the first steps
  overflow float16 and must be skipped while the scale comes down.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from drills.catalog.mixed_precision.problem import Regression, make_problem
from drills.catalog.mixed_precision.train import MixedPrecisionConfig, make_model

CONFIG = MixedPrecisionConfig()  # 512 examples, 8 features, 32 tanh units, lr 0.2, clip at 1
SCALE_POWERS = (10, 13, 24)  # the first scale of each hidden run's GradScaler: 2 to this power
QUIET_HEAD = 1  # the run whose output layer starts near zero
HEAD_SIZE = 1e-3  # its output weights are the drill's initial ones times this
QUIET_EXAMPLES = 2048  # and its one batch, the whole training set, is this large
STEPS = CONFIG.steps  # optimizer steps of a training run: 50, as in the drill

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Problem:
    case: int
    scale: float  # the GradScaler's first scale
    data: Regression  # the whole training set
    model: nn.Sequential  # at its initial weights, fixed by the seed
    batches: list[Batch]  # STEPS batches of CONFIG.batch_size, in order


def build(case: int, seed: int) -> Problem:
    examples = QUIET_EXAMPLES if case == QUIET_HEAD else CONFIG.examples
    data = make_problem(
        examples, CONFIG.features, CONFIG.noise, torch.Generator().manual_seed(seed)
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = make_model(CONFIG)
    if case == QUIET_HEAD:
        # A head started near zero: the gradients reaching the hidden layer are this small too.
        head = model[2]
        assert isinstance(head, nn.Linear)
        with torch.no_grad():
            head.weight.mul_(HEAD_SIZE)
    order = torch.Generator().manual_seed(seed + 1)
    size = len(data) if case == QUIET_HEAD else CONFIG.batch_size
    return Problem(case, 2.0 ** SCALE_POWERS[case], data, model, batches(data, size, order))


def batches(data: Regression, size: int, generator: torch.Generator) -> list[Batch]:
    """STEPS batches of `size` drawn in order from shuffled epochs (as the drill draws them)."""
    found: list[Batch] = []
    while len(found) < STEPS:
        order = torch.randperm(len(data), generator=generator)
        for start in range(0, len(data) - size + 1, size):
            index = order[start : start + size]
            found.append((data.features[index], data.targets[index]))
    return found[:STEPS]


def fresh_model(problem: Problem) -> nn.Sequential:
    model = make_model(CONFIG)
    model.load_state_dict(problem.model.state_dict())
    return model


def fresh_scaler(problem: Problem) -> torch.amp.GradScaler:
    return torch.amp.GradScaler("cpu", init_scale=problem.scale)


def copies(batches: list[Batch]) -> list[Batch]:
    return [(x.clone(), y.clone()) for x, y in batches]


def set_loss(weights: dict[str, torch.Tensor], data: Regression) -> float:
    """The whole training set's mean squared error at `weights`, in float64."""
    model = make_model(CONFIG).double()
    model.load_state_dict({name: value.double() for name, value in weights.items()})
    with torch.no_grad():
        return float((model(data.features.double()) - data.targets.double()).pow(2).mean())


def float32_step(problem: Problem, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """The step the loop means to take from the problem's initial weights, in float64: plain
    SGD on the batch's gradient clipped at max_norm. Returns (step, gradient), flattened."""
    model = make_model(CONFIG).double()
    model.load_state_dict({k: v.double() for k, v in problem.model.state_dict().items()})
    x, y = batch
    loss = (model(x.double()) - y.double()).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    gradient = torch.cat([g.flatten() for g in grads])
    norm = float(gradient.norm())
    clipped = gradient * min(1.0, CONFIG.max_norm / norm) if norm > 0 else gradient
    return -CONFIG.lr * clipped, gradient


def overflows(problem: Problem, gradient: torch.Tensor) -> bool:
    """Whether the first scaled gradients leave float16's range (a step the scaler must skip):
    the largest entry times the scale past float16's largest number, by a margin of 4."""
    return float(gradient.abs().max()) * problem.scale > 4 * torch.finfo(torch.float16).max


PARAMETERS = ("0.weight", "0.bias", "2.weight", "2.bias")  # the model's, in parameters() order


def flat(weights: dict[str, torch.Tensor]) -> torch.Tensor:
    """Every parameter in one float64 vector, in the order float32_step's gradient has."""
    return torch.cat([weights[name].double().flatten() for name in PARAMETERS])
