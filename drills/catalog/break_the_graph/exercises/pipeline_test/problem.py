"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). Two model designs the learner's test is run against, each
with a batch and a loss of its own:

- a stack: two ReLU layers, a head and a learned output gain, regressing with a mean squared
  error on plain features;
- a token model: an embedding averaged over the real (non-padding) tokens of each row, one
  residual block whose branch is scaled by a learned per-unit layer scale started at 1e-4 (as
  deep transformers start it), a LayerNorm and a head, classifying with a cross-entropy. Its
  branch's gradients are some ten thousand times smaller than the others', and not zero.

Each hidden run builds one of them healthy or broken in one place (FAULTS); the seed picks the
sizes, the batch, the broken part and, for a broken run, the design. The head is never the
broken part: whatever is broken sits below it, where the loss alone does not show it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

# What each hidden run is, in the order of the exercise's cases.
FAULTS = ("healthy", "small", "cut-off", "frozen", "times-zero", "unused", "dead-relus")
DESIGNS = ("stack", "tokens")
LAYER_SCALE = 1e-4  # the token model's branch starts this small: its gradients do too

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class Stack(nn.Module):
    def __init__(self, features: int, hidden: int, outputs: int) -> None:
        super().__init__()
        self.first = nn.Linear(features, hidden)
        self.second = nn.Linear(hidden, hidden)
        self.gain = nn.Parameter(torch.ones(outputs))
        self.head = nn.Linear(hidden, outputs)  # registered last: the model's last layer
        self.fault: str | None = None
        self.part = "first"  # where the fault sits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.first(x))
        if self.fault == "times-zero":
            h = h * (1 // h.shape[-1])  # meant as 1/sqrt(width): integer division gives 0
        h = h.detach() if self.fault == "cut-off" and self.part == "first" else h
        h = torch.relu(self.second(h))
        h = h.detach() if self.fault == "cut-off" and self.part == "second" else h
        out: torch.Tensor = self.head(h)
        return out if self.fault == "unused" else out * self.gain  # the gain forgotten


class Tokens(nn.Module):
    def __init__(self, vocabulary: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, hidden, padding_idx=0)
        self.inner = nn.Linear(hidden, 2 * hidden)
        self.outer = nn.Linear(2 * hidden, hidden)
        self.layer_scale = nn.Parameter(torch.full((hidden,), LAYER_SCALE))
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, classes)
        self.fault: str | None = None
        self.part = "embed"

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        real = (ids != 0).unsqueeze(-1).float()
        h = (self.embed(ids) * real).sum(1) / real.sum(1).clamp(min=1.0)
        h = h.detach() if self.fault == "cut-off" and self.part == "embed" else h
        branch = self.outer(torch.relu(self.inner(h)))
        if self.fault == "times-zero":
            branch = branch * (1 // branch.shape[-1])
        branch = branch.detach() if self.fault == "cut-off" and self.part == "branch" else branch
        h = h + self.layer_scale * branch
        h = h if self.fault == "unused" else self.norm(h)  # the norm built but never called
        return self.head(h)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Setup:
    """What one hidden run is, drawn from its seed."""

    fault: str
    design: str
    part: str  # the broken part ("first", "second", "embed", "inner", "branch")
    sizes: tuple[int, int, int, int, int]  # batch, inputs (features or vocabulary), hidden,
    # outputs (targets or classes), tokens per row


def setup(case: int, seed: int) -> Setup:
    fault = FAULTS[case]
    generator = torch.Generator().manual_seed(seed)

    def pick(options: tuple[str, ...]) -> str:
        return options[int(torch.randint(len(options), (1,), generator=generator))]

    design = {"healthy": "stack", "small": "tokens"}.get(fault) or pick(DESIGNS)
    if design == "stack":
        part = pick(("first", "second")) if fault in ("cut-off", "frozen") else "first"
    elif fault in ("cut-off", "frozen"):
        part = pick(("embed", "branch")) if fault == "cut-off" else pick(("embed", "inner"))
    else:
        part = "inner"
    batch = 12 + int(torch.randint(29, (1,), generator=generator))
    inputs = (5 if design == "stack" else 20) + int(torch.randint(8, (1,), generator=generator))
    hidden = (16, 24, 32)[int(torch.randint(3, (1,), generator=generator))]
    outputs = 2 + int(torch.randint(3, (1,), generator=generator))
    tokens = 5 + int(torch.randint(6, (1,), generator=generator))
    return Setup(fault, design, part, (batch, inputs, hidden, outputs, tokens))


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build_batch(case: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The run's batch: (features, targets) for the stack, (token ids with 0 as padding, class
    labels) for the token model, where every row has at least one real token."""
    plan = setup(case, seed)
    rows, inputs, _, outputs, tokens = plan.sizes
    generator = torch.Generator().manual_seed(seed + 1)
    if plan.design == "stack":
        features = torch.randn(rows, inputs, generator=generator)
        return features, torch.randn(rows, outputs, generator=generator)
    ids = torch.randint(1, inputs, (rows, tokens), generator=generator)
    lengths = torch.randint(1, tokens + 1, (rows, 1), generator=generator)
    ids[torch.arange(tokens).unsqueeze(0) >= lengths] = 0
    return ids, torch.randint(outputs, (rows,), generator=generator)


def loss_of(case: int, seed: int) -> Loss:
    return F.mse_loss if setup(case, seed).design == "stack" else F.cross_entropy


def build_model(case: int, seed: int) -> nn.Module:
    """A fresh model for the run, the same each time it is built."""
    plan = setup(case, seed)
    _, inputs, hidden, outputs, _ = plan.sizes
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(seed)
        model: Stack | Tokens = (
            Stack(inputs, hidden, outputs)
            if plan.design == "stack"
            else Tokens(inputs, hidden, outputs)
        )
    broken = plan.fault if plan.fault not in ("healthy", "small") else None
    model.fault, model.part = broken, plan.part
    if broken == "frozen":  # frozen after it was built, as fine-tuning code freezes layers
        getattr(model, plan.part).requires_grad_(False)
    if broken == "dead-relus":  # a bias pushed so low that no example makes a unit fire
        dead: nn.Linear = getattr(model, plan.part)
        with torch.no_grad():
            dead.bias.fill_(-100.0)
    return model
