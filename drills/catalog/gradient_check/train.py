"""The run of "Check a hand-written gradient": check a custom backward against finite differences,
train a tiny MLP with it beside torch's own, and check a vectorised masked mean against a loop.

Kept apart from the drill's description (__init__.py) so that only a worker process imports torch.
"""

from __future__ import annotations

import copy
import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.gradient_check.masked_mean import (
    masked_mean_loop,
    masked_mean_vectorised,
    padded_rows,
)
from drills.catalog.gradient_check.selu import (
    GradientComparison,
    check_inputs,
    compare_with_finite_differences,
    hand_written_selu,
    passes_gradcheck,
)
from drills.catalog.gradient_check.signature import GradientCheckSignature
from drills.catalog.gradient_check.variants import GRAD_TOLERANCE, MEAN_TOLERANCE
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.tables import table

Activation = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class GradientCheckConfig:
    backward: str = "correct"  # the hand-written SELU backward (see BACKWARDS)
    masked_mean: str = "correct"  # the vectorised masked mean (see MASKED_MEANS)
    steps: int = 150  # SGD steps of the tiny MLP
    lr: float = 0.05  # plain SGD, so a wrong gradient is followed as it is
    examples: int = 64
    features: int = 8
    hidden: int = 16


class TinyMLP(nn.Module):
    def __init__(self, config: GradientCheckConfig, activation: Activation) -> None:
        super().__init__()
        self.first = nn.Linear(config.features, config.hidden)
        self.second = nn.Linear(config.hidden, 1)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.activation(self.first(x))).squeeze(-1)  # type: ignore[no-any-return]


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    config = GradientCheckConfig(
        backward=knobs["backward"], masked_mean=knobs["masked_mean"], steps=knobs["steps"]
    )
    run = Run(seed, report)
    selu = hand_written_selu(config.backward)
    signature = GradientCheckSignature(grad_tolerance=GRAD_TOLERANCE)

    # (a) The backward against central differences, at one float64 point on both branches.
    x = check_inputs(run.data_rng)
    # Random output weights (a backward that ignored grad_output would pass with ones), kept
    # away from 0: the relative error of a near-zero gradient would be mostly rounding.
    weights = check_inputs(run.data_rng)
    weights = weights + 0.45 * weights.sign()
    comparison = compare_with_finite_differences(selu, x, weights)
    describe_gradient_check(signature, comparison)
    signature.gradcheck_passed = passes_gradcheck(selu, x)
    # Each element's error, in order of its input value: negative inputs left, positive right.
    errors, points = comparison.relative_error.view(-1), comparison.inputs.view(-1)
    for rank, index in enumerate(points.argsort().tolist()):
        run.log("relative_error", rank, max(float(errors[index]), 1e-16))  # log scale: no zero

    # What the learner would see without the check: the same tiny MLP trained with the
    # hand-written activation and with torch's, from the same start, on the same data.
    features, targets = teacher_data(config, run.data_rng)
    model = TinyMLP(config, selu)
    reference = copy.deepcopy(model)
    reference.activation = torch.selu
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    for step in range(config.steps):
        loss = F.mse_loss(model(features), targets)
        reference_loss = F.mse_loss(reference(features), targets)
        if run.stop_if_nonfinite(step, loss.item(), reference_loss.item()):
            break  # a wrong gradient can climb without end: stop rather than plot inf
        optimizer.zero_grad(set_to_none=True)
        reference_optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        reference_loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        reference_optimizer.step()
        run.log("loss", step, loss.item())
        run.log("reference_loss", step, reference_loss.item())
    signature.initial_loss = run.first("loss")
    signature.final_loss = run.tail_mean("loss")
    signature.reference_final_loss = run.tail_mean("reference_loss")
    if signature.final_loss is not None and signature.reference_final_loss:
        signature.loss_ratio = signature.final_loss / signature.reference_final_loss

    # (b) Write it twice: the vectorised masked mean against the loop, row by row.
    values, lengths = padded_rows(run.data_rng)
    vectorised = masked_mean_vectorised(values, lengths, config.masked_mean).tolist()
    looped = masked_mean_loop(values, lengths)
    for row, (fast, slow) in enumerate(zip(vectorised, looped, strict=True)):
        run.log("loop_row_mean", row, slow)
        run.log("vectorised_row_mean", row, fast)
    describe_masked_means(signature, lengths.tolist(), values.shape[1], vectorised, looped)

    tables = [
        worst_elements_table(comparison),
        rows_table(lengths.tolist(), values.shape[1], vectorised, looped),
    ]
    inputs = {
        "shapes": {"check_point": list(x.shape), "features": list(features.shape)},
        "padded_rows": {"values": list(values.shape), "lengths": lengths.tolist()},
        "dtype_of_checks": "float64",
        "sha256": data_digest(x, weights, features, targets, values, lengths),
    }
    return run.outcome(signature, inputs=inputs, tables=tables)


def teacher_data(
    config: GradientCheckConfig, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets from a fixed random teacher MLP (with torch's SELU): a student of the
    same shape can fit them, so the floor is near zero and any gap is the gradient's doing."""
    features = torch.randn(config.examples, config.features, generator=generator)
    first = torch.randn(config.features, config.hidden, generator=generator) / config.features**0.5
    second = torch.randn(config.hidden, generator=generator) / config.hidden**0.5
    return features, torch.selu(features @ first) @ second


def data_digest(*tensors: torch.Tensor) -> str:
    sha = hashlib.sha256()
    for tensor in tensors:
        flat = tensor.detach().flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{'d' if tensor.is_floating_point() else 'q'}", *flat))
    return sha.hexdigest()


# --- Evidence -----------------------------------------------------------------------------------


def describe_gradient_check(signature: GradientCheckSignature, c: GradientComparison) -> None:
    errors, inputs = c.relative_error.view(-1), c.inputs.view(-1)
    worst = int(errors.argmax())
    signature.elements_checked = errors.numel()
    signature.max_grad_error = float(errors[worst])
    signature.worst_element = worst
    signature.worst_input = float(inputs[worst])
    signature.negative_inputs_error = float(errors[inputs < 0].max())
    signature.positive_inputs_error = float(errors[inputs > 0].max())


def describe_masked_means(
    signature: GradientCheckSignature,
    lengths: list[int],
    padded_length: int,
    vectorised: list[float],
    looped: list[float],
) -> None:
    differences = [abs(fast - slow) for fast, slow in zip(vectorised, looped, strict=True)]
    padded = [length < padded_length for length in lengths]
    disagreeing = [row for row, diff in enumerate(differences) if diff > MEAN_TOLERANCE]
    signature.rows = len(lengths)
    signature.padded_rows = sum(padded)
    signature.loop_vs_vectorised_max_diff = max(differences)
    signature.rows_disagreeing = len(disagreeing)
    signature.disagreeing_rows = ", ".join(str(row) for row in disagreeing)
    signature.padded_rows_disagreeing = sum(padded[row] for row in disagreeing)
    full = [diff for diff, is_padded in zip(differences, padded, strict=True) if not is_padded]
    signature.full_rows_max_diff = max(full) if full else None


def worst_elements_table(c: GradientComparison, count: int = 6) -> dict[str, Any]:
    errors = c.relative_error.view(-1)
    order = errors.argsort(descending=True)[:count].tolist()
    rows = [
        [
            i,
            round(float(c.inputs.view(-1)[i]), 4),
            float(c.analytic.view(-1)[i]),
            float(c.numeric.view(-1)[i]),
            float(errors[i]),
        ]
        for i in order
    ]
    return table(
        "worst_gradient_elements",
        "Gradient check: the elements that disagree most",
        ("element", "input x", "backward says", "finite differences say", "relative error"),
        rows,
        note=(
            "The gradient of sum(selu(x) · w) with respect to each element of x, from the "
            "hand-written backward and from central differences (float64, step 1e-6). A right "
            "backward agrees to about 1e-9; look at the sign of x where it does not."
        ),
    )


def rows_table(
    lengths: list[int], padded_length: int, vectorised: list[float], looped: list[float]
) -> dict[str, Any]:
    rows = [
        [row, length, length < padded_length, slow, fast, fast - slow]
        for row, (length, fast, slow) in enumerate(zip(lengths, vectorised, looped, strict=True))
    ]
    return table(
        "masked_mean_rows",
        "Write it twice: each row's masked mean, loop against vectorised",
        ("row", "real positions", "padded", "loop", "vectorised", "difference"),
        rows,
        note=(
            f"Every row has {padded_length} positions; only the first 'real positions' count. "
            "Rows that disagree tell you which part of the vectorised code is wrong: only "
            "padded rows means the padding is handled wrongly."
        ),
    )
