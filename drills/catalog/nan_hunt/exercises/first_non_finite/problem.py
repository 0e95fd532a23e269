"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). A small classifier whose middle is a Sequential inside a
module (so its parts have dotted names such as 'encoder.layers.1'), one batch, and the loss
function the finder is handed. Each hidden run plants one fault, or none; the seed picks where.

`Problem.expected` is where the fault was planted, as (stage, module name). The checks do not
trust it: they run the model themselves and find the first non-finite value (checks.py); the
tests assert the two agree on many seeds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

FEATURES, HIDDEN, CLASSES, EXAMPLES = 8, 16, 4, 32

# What each hidden run plants, in the order of the exercise's cases.
FAULTS = (
    "healthy",
    "inf-weight",
    "log-negative",
    "divide-zero",
    "exp-overflow",
    "hidden",
    "loss",
    "backward",
)
STAGES = ("forward", "loss", "backward")  # the answer's stage; its code is the index
LINEARS = ("embed", "encoder.layers.0", "encoder.layers.2", "head")
SLOTS = (1, 3)  # the positions in encoder.layers whose activation a fault may replace

Answer = tuple[str, str | None] | None
LossFn = Callable[[torch.Tensor], torch.Tensor]


class LogCompress(nn.Module):
    """Log-scaled features, written without asking whether they are positive."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class Standardize(nn.Module):
    """Each feature scaled to unit spread over the batch, with no epsilon."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - x.mean(0)) / x.std(0)


class SoftGate(nn.Module):
    """A softmax over the features, written out: exp, then divide by the sum."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = torch.exp(x)
        return weights / weights.sum(-1, keepdim=True)


class Sanitize(nn.Module):
    """Replaces NaN and inf, as code that has met them before sometimes does."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0)


class RootGate(nn.Module):
    """The square root of the positive part, 0 elsewhere: finite forward. Where x < 0 the
    backward multiplies the 0 that torch.where sends by sqrt's derivative there, NaN."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x.sqrt(), torch.zeros_like(x))


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(HIDDEN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.Tanh()
        )
        self.norm: nn.Module = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.layers(x))  # type: ignore[no-any-return]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(FEATURES, HIDDEN)
        self.encoder = Encoder()
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(torch.relu(self.embed(x))))  # type: ignore[no-any-return]


@dataclass
class Problem:
    model: Net
    inputs: torch.Tensor
    targets: torch.Tensor
    expected: Answer  # where the fault was planted (the checks measure it for themselves)

    @property
    def loss_fn(self) -> LossFn:
        """The loss the finder is handed: a closure over the targets alone, so that nothing the
        learner's code can reach from it leads back to `expected`."""
        return written_out_cross_entropy(self.targets)


def written_out_cross_entropy(targets: torch.Tensor) -> LossFn:
    """Cross-entropy written out as the log of the softmax's probability of the target."""

    def loss_fn(logits: torch.Tensor) -> torch.Tensor:
        probabilities = torch.softmax(logits, dim=-1)
        return -torch.log(probabilities.gather(1, targets[:, None])).mean()

    return loss_fn


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build(fault: str, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(EXAMPLES, FEATURES, generator=generator)
    targets = torch.randint(CLASSES, (EXAMPLES,), generator=generator)

    def pick(count: int) -> int:
        return int(torch.randint(count, (1,), generator=generator))

    with torch.random.fork_rng(devices=[]), one_thread(), torch.no_grad():
        torch.manual_seed(seed)
        model = Net()
        layers = model.encoder.layers
        expected: Answer = None
        slot = SLOTS[pick(len(SLOTS))]
        if fault == "inf-weight":
            name = LINEARS[pick(len(LINEARS))]
            weight = linear_at(model, name).weight
            row, column = pick(weight.shape[0]), pick(weight.shape[1])
            weight[row, column] = float("inf") if pick(2) else float("-inf")
            expected = ("forward", name)
        elif fault == "log-negative":
            layers[slot] = LogCompress()
            expected = ("forward", f"encoder.layers.{slot}")
        elif fault == "divide-zero":
            # A unit whose weights are all 0 gives the same value on every example: spread 0.
            place = pick(3)
            unit = pick(HIDDEN)
            linear = linear_at(model, "encoder.layers.0" if place == 0 else "encoder.layers.2")
            linear.weight[unit] = 0.0
            linear.bias[unit] = 0.0  # exactly 0 everywhere, so its mean is exactly 0 too
            if place == 2:
                model.encoder.norm = Standardize()
                expected = ("forward", "encoder.norm")
            else:
                layers[SLOTS[place]] = Standardize()
                expected = ("forward", f"encoder.layers.{SLOTS[place]}")
        elif fault == "exp-overflow":
            linear_at(model, f"encoder.layers.{slot - 1}").weight.mul_(
                400.0
            )  # pre-activations in the hundreds: exp is inf
            layers[slot] = SoftGate()
            expected = ("forward", f"encoder.layers.{slot}")
        elif fault == "hidden":
            layers[3] = LogCompress()
            model.encoder.norm = Sanitize()  # the model's output comes out finite
            expected = ("forward", "encoder.layers.3")
        elif fault == "loss":
            model.head.weight.mul_(1000.0)  # logits thousands apart: finite, but softmax is not
            # The target of each example: the class its logits rank lowest (probability 0).
            targets = model(inputs).argmin(dim=-1)
            expected = ("loss", None)
        elif fault == "backward":
            layers[slot] = RootGate()
            expected = ("backward", f"encoder.layers.{slot}")
    return Problem(model, inputs, targets, expected)


def linear_at(model: nn.Module, name: str) -> nn.Linear:
    linear = model.get_submodule(name)
    assert isinstance(linear, nn.Linear), name
    return linear


def finite_copy(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The weights with every NaN or inf read as 0: the layout the weights blob must have (a
    planted inf weight is a fault of the model, not of the learner's code). The exact weights
    cross separately, as values."""
    return {
        name: torch.where(torch.isfinite(t), t, torch.zeros_like(t)) if t.is_floating_point() else t
        for name, t in state.items()
    }
