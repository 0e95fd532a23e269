"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside).

The loss is a masked smooth L1 (quadratic below `beta`, linear above), averaged over each log's
real steps and then over the logs that have any; a log with no real step counts for nothing,
and a batch without any real step has a loss of 0. `masked_smooth_l1` below is its plain
re-implementation, differentiated by autograd: the judge's reference for the value and the
gradient, and the loss of the reference training.

Each hidden run holds:
- probes: inputs of the judge's choosing for the learner's Function, at three betas (the loop's,
  1 as in the starter's self-test, and 2), each with a full log, a log with no real step, and
  logs whose real steps are scattered; a third of the real residuals sit inside beta, a third
  outside, a third within 0.1% of it, on both sides; padded steps hold large garbage residuals;
  the loss is scaled by a random `grad_output` (negative in some) before backward;
- the drill's tiny MLP (with torch's SELU) at initial weights fixed by the seed, a stream of
  STEPS padded batches (one log in each has no reading) labelled by a teacher of the same shape
  whose readings are noisy and glitch now and then, and held-out batches drawn the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.gradient_check.train import GradientCheckConfig, TinyMLP

CONFIG = GradientCheckConfig()  # the drill's MLP: 8 features, 16 hidden units
BETA = 0.25  # the loop's beta
LR = 0.01  # the loop's rate (Adam)
STEPS = 200  # batches of a training run
HELD_OUT = 8  # batches the trained model is measured on
LOGS, LENGTH = 16, 12  # a batch: 16 logs padded to 12 steps
NOISE = 0.05  # reading noise
GLITCH_SHARE, GLITCH = 0.08, (2.0, 5.0)  # a reading off by 2 to 5, 8% of the time
TEACHER_BIAS = 1.0  # so a model pulled towards the padding's zeros is pulled off the teacher
# (logs, steps, beta) of the probes of every hidden run.
PROBES = ((6, 10, BETA), (5, 8, 1.0), (4, 12, 2.0))
EDGE = 1e-3  # "next to beta": |pred - target| within this share of beta


@dataclass(frozen=True)
class Probe:
    pred: torch.Tensor  # (logs, steps) float64
    target: torch.Tensor  # (logs, steps) float64
    mask: torch.Tensor  # (logs, steps) bool, True at real steps
    beta: float
    grad_output: float  # what the loss is multiplied by before backward


@dataclass(frozen=True)
class Logs:
    features: torch.Tensor  # (LOGS, LENGTH, features) float32, 0 at padding
    target: torch.Tensor  # (LOGS, LENGTH) float32, 0 at padding
    mask: torch.Tensor  # (LOGS, LENGTH) bool


@dataclass(frozen=True)
class Problem:
    model: TinyMLP  # at its initial weights
    stream: list[Logs]  # one batch a step
    held_out: list[Logs]
    probes: list[Probe]


def masked_smooth_l1(
    pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, beta: float
) -> torch.Tensor:
    """The loss, written plainly: torch's smooth L1 per step, masked, per log, over logs."""
    per_step = F.smooth_l1_loss(pred, target, reduction="none", beta=beta) * mask
    counts = mask.sum(dim=1)
    logs = (counts > 0).sum().clamp_min(1)
    return (per_step.sum(dim=1) / counts.clamp_min(1)).sum() / logs


def initial_model(seed: int) -> TinyMLP:
    """The student at its initial weights, fixed by the seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyMLP(CONFIG, torch.selu)


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 1)
        teacher = TinyMLP(CONFIG, torch.selu)
    with torch.no_grad():
        teacher.second.bias.fill_(TEACHER_BIAS)
    stream = make_logs(teacher, generator, STEPS)
    held_out = make_logs(teacher, generator, HELD_OUT)
    probes = [make_probe(generator, logs, steps, beta) for logs, steps, beta in PROBES]
    return Problem(initial_model(seed), stream, held_out, probes)


@torch.no_grad()
def make_logs(teacher: TinyMLP, generator: torch.Generator, count: int) -> list[Logs]:
    """`count` batches, drawn at once (one teacher pass) and cut into batches."""
    shape = (count, LOGS, LENGTH)
    features = torch.randn(*shape, CONFIG.features, generator=generator)
    lengths = torch.randint(3, LENGTH + 1, shape[:2], generator=generator)
    off = torch.randint(0, LOGS, (count,), generator=generator)
    lengths[torch.arange(count), off] = 0  # one log a batch: the sensor was off
    mask = torch.arange(LENGTH) < lengths[..., None]
    target = teacher(features) + NOISE * torch.randn(shape, generator=generator)
    glitch = torch.rand(shape, generator=generator) < GLITCH_SHARE
    sign = torch.where(torch.rand(shape, generator=generator) < 0.5, -1.0, 1.0)
    size = GLITCH[0] + (GLITCH[1] - GLITCH[0]) * torch.rand(shape, generator=generator)
    target = target + glitch * sign * size
    # Padding holds zeros, as a collate function leaves it.
    features, target = features * mask[..., None], target * mask
    return [Logs(features[i], target[i], mask[i]) for i in range(count)]


def make_probe(generator: torch.Generator, logs: int, steps: int, beta: float) -> Probe:
    def uniform(*shape: int) -> torch.Tensor:
        return torch.rand(shape, generator=generator, dtype=torch.float64)

    mask = uniform(logs, steps) < 0.6  # real steps anywhere, not only at the front
    mask[torch.arange(logs), torch.randint(0, steps, (logs,), generator=generator)] = True
    mask[0], mask[1] = True, False  # a full log, and one with no real step
    mask = mask[torch.randperm(logs, generator=generator)]
    kind = (torch.arange(logs * steps) % 3)[torch.randperm(logs * steps, generator=generator)]
    kind = kind.view(logs, steps)
    inside = beta * (0.05 + 0.9 * uniform(logs, steps))
    outside = beta * 1.05 + 3.0 * uniform(logs, steps)
    edge = beta * (1 + EDGE * (2 * uniform(logs, steps) - 1))
    size = torch.where(kind == 0, inside, torch.where(kind == 1, outside, edge))
    sign = torch.where(uniform(logs, steps) < 0.5, -1.0, 1.0).double()
    garbage = 5.0 * torch.randn(logs, steps, generator=generator, dtype=torch.float64)
    diff = torch.where(mask, sign * size, garbage)  # a padded step's reading is anything
    target = 2.0 * torch.randn(logs, steps, generator=generator, dtype=torch.float64)
    scale = float(0.5 + 1.5 * uniform(1)) * (-1.0 if float(uniform(1)) < 0.3 else 1.0)
    return Probe(target + diff, target, mask, beta, scale)


def fresh_model(problem: Problem) -> TinyMLP:
    return copy.deepcopy(problem.model)


def as_triples(batches: list[Logs]) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The batches as new (features, target, mask) tensors: the problem keeps its own."""
    return [(b.features.clone(), b.target.clone(), b.mask.clone()) for b in batches]


def reference_gradient(probe: Probe) -> tuple[float, torch.Tensor]:
    """The probe's loss and the gradient of grad_output times it, in float64 by autograd."""
    pred = probe.pred.double().clone().requires_grad_()
    loss = masked_smooth_l1(pred, probe.target.double(), probe.mask, probe.beta)
    (gradient,) = torch.autograd.grad(loss * probe.grad_output, pred)
    return float(loss.detach()), gradient


def held_out_loss(weights: dict[str, torch.Tensor], problem: Problem) -> float:
    """The held-out batches' mean loss at `weights`, in float64, at the loop's beta."""
    model = copy.deepcopy(problem.model).double()
    model.load_state_dict({name: value.double() for name, value in weights.items()})
    with torch.no_grad():
        losses = [
            float(masked_smooth_l1(model(b.features.double()), b.target.double(), b.mask, BETA))
            for b in problem.held_out
        ]
    return sum(losses) / len(losses)


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: on a busy machine, more only spin (the judge's training
    costs a tenth of the CPU time on one thread)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def reference_training(problem: Problem) -> dict[str, torch.Tensor]:
    """The starter's loop with the loss's true gradient (autograd of the plain loss), from the
    same start on the same stream: what a right backward trains to."""
    model = fresh_model(problem)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for batch in problem.stream:
        loss = masked_smooth_l1(model(batch.features), batch.target, batch.mask, BETA)
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    return {name: value.detach().clone() for name, value in model.state_dict().items()}
