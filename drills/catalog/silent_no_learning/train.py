"""The training loop of "The loop runs, nothing learns", with one silent bug injected.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.silent_no_learning.signature import SilentSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.core.curves import tail
from drills.kit.audit import total_grad_norm
from drills.kit.layer_stats import LayerGradients
from drills.kit.run import Run
from drills.kit.synthetic_classification import (
    LabelledSet,
    TeacherTask,
    decoded_examples,
    draw_set,
    make_teacher,
    sets_digest,
)

LAYERS = ("hidden1", "hidden2", "output")


@dataclass(frozen=True)
class SilentConfig:
    bug: str = "none"  # which silent bug to inject (see BUGS in __init__.py)
    lr: float = 0.1  # plain SGD: without zero_grad() its step grows with the summed gradients
    steps: int = 150  # minibatch steps
    examples: int = 512  # the training set
    batch_size: int = 64
    hidden: int = 64


def build_model(task: TeacherTask, hidden: int) -> nn.Sequential:
    return nn.Sequential(
        OrderedDict(
            hidden1=nn.Linear(task.features, hidden),
            relu1=nn.ReLU(),
            hidden2=nn.Linear(hidden, hidden),
            relu2=nn.ReLU(),
            output=nn.Linear(hidden, task.classes),
        )
    )


def batches(data: LabelledSet, config: SilentConfig, run: Run) -> Any:
    """Shuffled minibatches, epoch after epoch, in an order drawn from the run's order generator."""
    while True:
        order = torch.randperm(len(data), generator=run.order_rng)
        for start in range(0, len(data) - config.batch_size + 1, config.batch_size):
            index = order[start : start + config.batch_size]
            yield data.features[index], data.labels[index]


def error_rate(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The bug's loss: the share of the batch predicted wrong. It is the number we want down,
    but argmax returns integers, and nothing computed from them has a gradient."""
    return (logits.argmax(dim=1) != labels).float().mean()


def one_hot_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The bug's loss: cross-entropy of the argmax'd predictions, one-hot encoded. It reads like a
    cross-entropy (near log 4 at chance), but the one-hot comes from argmax's integers, so it
    has no path back to the logits either."""
    predicted = F.one_hot(logits.argmax(dim=1), logits.shape[1]).float()
    return F.cross_entropy(predicted, labels)


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with the chosen silent bug; see SilentNoLearning."""
    config = SilentConfig(
        bug=knobs["bug"], lr=knobs["lr"], steps=knobs["steps"], hidden=knobs["hidden"]
    )
    bug = config.bug
    run = Run(seed, report)
    task = TeacherTask()
    data = draw_set(task, make_teacher(task, run.data_rng), config.examples, run.data_rng)

    model = build_model(task, config.hidden)
    if bug == "requires-grad-off":
        # Left over from an experiment with frozen random features: the first layer never
        # gets a gradient, and SGD skips a parameter without one.
        model.hidden1.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    layers = LayerGradients(run, {name: getattr(model, name) for name in LAYERS})

    loss_has_grad_fn = True
    stale_grad_steps = 0
    for step, (x, y) in zip(range(config.steps), batches(data, config, run), strict=False):
        logits = model(x)
        if bug in ("argmax-before-loss", "one-hot-argmax"):
            lossy = error_rate if bug == "argmax-before-loss" else one_hot_cross_entropy
            loss = lossy(logits, y)
            # The usual "fix" for backward's error about a tensor without a grad_fn: it makes
            # backward run, and it reaches nothing.
            loss.requires_grad_(True)
        else:
            loss = F.cross_entropy(logits, y)
        loss_has_grad_fn = loss_has_grad_fn and loss.grad_fn is not None
        if run.stop_if_nonfinite(step, loss.item()):
            break  # diverged: stop rather than plot NaN
        if bug != "no-zero-grad":
            optimizer.zero_grad(set_to_none=True)
        stale_grad_steps += holds_a_gradient(model)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        grad_norm = total_grad_norm(model.parameters())
        if run.stop_if_nonfinite(step, grad_norm):
            break
        layers.after_backward(step)
        if bug != "no-step":
            optimizer.step()
        layers.after_step(step)

        run.log("loss", step, loss.item())
        run.log("accuracy", step, float((logits.argmax(dim=1) == y).float().mean()))
        run.log("grad_norm", step, grad_norm)

    rows = run.parameter_rows()
    grad_norms = run.values("grad_norm")
    head = grad_norms[: len(tail(grad_norms))]  # the first 10%, as many steps as the tail
    signature = SilentSignature(
        parameters=len(rows),
        frozen=sum(not row["requires_grad"] for row in rows),
        grad_none=sum(row["grad"] == "none" for row in rows),
        grad_finite=sum(row["grad"] == "finite" for row in rows),
        moved=sum(row["update_norm"] > 0 for row in rows),
        moved_share=sum(row["update_norm"] > 0 for row in rows) / len(rows),
        loss_has_grad_fn=loss_has_grad_fn,
        stale_grad_steps=stale_grad_steps,
        grad_norm_growth=growth(head, run.tail_mean("grad_norm")),
        initial_loss=run.first("loss"),
        final_loss=run.tail_mean("loss"),
        max_loss=max(run.values("loss"), default=None),
        steps_run=len(run.values("loss")),
        nonfinite_step=run.nonfinite_step,
    )
    inputs = {
        "shapes": {"features": list(data.features.shape), "labels": list(data.labels.shape)},
        "batch_size": config.batch_size,
        "sha256": sets_digest(data),
        "examples": decoded_examples(data),
    }
    diagnostics: dict[str, Any] = {}
    if bug in ("argmax-before-loss", "one-hot-argmax"):
        diagnostics["torch_error"] = what_backward_said(model, data, bug)
    return run.outcome(signature, inputs=inputs, **diagnostics)


def holds_a_gradient(model: nn.Module) -> bool:
    """Whether some parameter's .grad is not cleared just before backward: a non-zero gradient
    left by an earlier step, which backward will add this batch's gradient to."""
    return any(p.grad is not None and bool(p.grad.any()) for p in model.parameters())


def growth(head: list[float], tail_mean: float | None) -> float | None:
    """How many times larger the gradient norm ends than it starts (None if it starts at 0)."""
    if not head or tail_mean is None:
        return None
    start = sum(head) / len(head)
    return tail_mean / start if start > 0 else None


def what_backward_said(model: nn.Module, data: LabelledSet, bug: str) -> str | None:
    """The error the requires_grad_(True) line silenced: backward on the argmax loss as written."""
    lossy = error_rate if bug == "argmax-before-loss" else one_hot_cross_entropy
    loss = lossy(model(data.features), data.labels)
    try:
        loss.backward()  # type: ignore[no-untyped-call]
    except RuntimeError as exc:
        return str(exc)
    return None
