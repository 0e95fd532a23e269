"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The drill's own task and network: 512 examples of 8
features and 4 classes from a random teacher, the two-hidden-layer MLP, minibatches of 64 drawn
from shuffled epochs, plain SGD at lr 0.1 for 150 steps (SilentConfig's defaults).

The judge replays plain SGD here in float64, from the same weights on the same batches: the
steps a wired loop takes, and the ones a loop whose .grad is never cleared takes."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.silent_no_learning.train import SilentConfig, build_model
from drills.kit.synthetic_classification import LabelledSet, TeacherTask, draw_set, make_teacher

CONFIG = SilentConfig()  # lr 0.1, 150 steps, 512 examples, batches of 64, 64 hidden units
TASK = TeacherTask()  # 8 features, 4 classes
SHORT = 2  # batches of the short run: the second step shows what .grad held before it

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Problem:
    data: LabelledSet  # the whole training set
    model: nn.Sequential  # at its initial weights, fixed by the seed
    batches: list[Batch]  # CONFIG.steps minibatches, in order


def build(seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    data = draw_set(TASK, make_teacher(TASK, generator), CONFIG.examples, generator)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_model(TASK, CONFIG.hidden)
    order = torch.Generator().manual_seed(seed + 1)
    return Problem(data, model, minibatches(data, CONFIG.steps, order))


def minibatches(data: LabelledSet, count: int, generator: torch.Generator) -> list[Batch]:
    """`count` minibatches of CONFIG.batch_size, in order from shuffled epochs (as the drill's)."""
    size = CONFIG.batch_size
    found: list[Batch] = []
    while len(found) < count:
        order = torch.randperm(len(data), generator=generator)
        for start in range(0, len(data) - size + 1, size):
            index = order[start : start + size]
            found.append((data.features[index], data.labels[index]))
    return found[:count]


def fresh_model(problem: Problem) -> nn.Sequential:
    """A new network at the problem's initial weights."""
    model = build_model(TASK, CONFIG.hidden)
    model.load_state_dict(problem.model.state_dict())
    return model


def copies(batches: list[Batch]) -> list[Batch]:
    """The batches as new tensors: whatever the code does to them, the problem keeps its own."""
    return [(x.clone(), y.clone()) for x, y in batches]


def loaded(weights: dict[str, torch.Tensor]) -> nn.Sequential:
    """The network at `weights`, in float64 (weights that blew up still give a loss)."""
    model = build_model(TASK, CONFIG.hidden).double()
    model.load_state_dict({name: tensor.double() for name, tensor in weights.items()})
    return model


def set_loss(weights: dict[str, torch.Tensor], data: LabelledSet) -> float:
    """The whole training set's cross-entropy at `weights`."""
    with torch.no_grad():
        return float(F.cross_entropy(loaded(weights)(data.features.double()), data.labels))


def gradients(model: nn.Sequential, batch: Batch) -> dict[str, torch.Tensor]:
    """The gradient of the batch's mean cross-entropy, by parameter name."""
    features, labels = batch
    loss = F.cross_entropy(model(features.double()), labels)
    names, parameters = zip(*model.named_parameters(), strict=True)
    found = torch.autograd.grad(loss, parameters)
    return dict(zip(names, found, strict=True))


def replay(
    initial: dict[str, torch.Tensor], batches: list[Batch], *, cleared: bool = True
) -> dict[str, torch.Tensor]:
    """Plain SGD at CONFIG.lr, one step per batch, from `initial`: the weights it ends at. With
    `cleared=False`, each step follows the sum of every gradient so far (.grad never cleared)."""
    model = loaded(initial)
    held: dict[str, torch.Tensor] = {}
    for batch in batches:
        grads = gradients(model, batch)
        held = {n: g + held[n] if n in held and not cleared else g for n, g in grads.items()}
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                parameter.sub_(CONFIG.lr * held[name])
    return {name: tensor.detach() for name, tensor in model.state_dict().items()}
