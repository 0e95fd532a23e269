"""The training loop of "Hunt the NaN": a token classifier trained with a first-non-finite finder.

Every step is checked stage by stage (data, activations, loss, gradients, parameters) and
training stops at the first non-finite tensor. Kept apart from the drill's description
(__init__.py) so that only a worker process that trains imports torch.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from drills.catalog.nan_hunt.numerics import LOG_UNDERFLOW_GAP
from drills.catalog.nan_hunt.signature import NanHuntSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.nonfinite import STAGES, Finding, FirstNonFinite
from drills.kit.run import Run
from drills.kit.tables import table


@dataclass(frozen=True)
class NanHuntConfig:
    cause: str = "none"
    steps: int = 150
    sequences: int = 8  # sequences per batch
    length: int = 12  # tokens per sequence, padding included
    min_length: int = 4  # shortest real sequence (the unusual batch breaks this on purpose)
    features: int = 8  # input features per token
    hidden: int = 32
    classes: int = 4
    lr: float = 0.05  # SGD with momentum
    momentum: float = 0.9
    huge_lr_factor: float = 1e4  # what "huge-lr" multiplies the learning rate by
    # The head sharpens its logits (divides by 0.1): they grow large as the model gets confident,
    # which the stable log-softmax takes in its stride and log(softmax(z)) does not.
    temperature: float = 0.1
    unusual_step: int = 40  # the batch at this step holds an empty sequence


@dataclass(frozen=True)
class Batch:
    features: torch.Tensor  # (sequences, length, features) float32, zeros at padding
    labels: torch.Tensor  # (sequences, length) int64, 0 at padding (masked out anyway)
    mask: torch.Tensor  # (sequences, length) bool, True for real tokens


def make_batch(
    config: NanHuntConfig, generator: torch.Generator, teacher: torch.Tensor, step: int
) -> Batch:
    """One batch of the seeded stream; every cause draws the same numbers, then may spoil them."""
    lengths = torch.randint(
        config.min_length, config.length + 1, (config.sequences,), generator=generator
    )
    features = torch.randn(config.sequences, config.length, config.features, generator=generator)
    if step == config.unusual_step:
        lengths[0] = 0  # one empty sequence, e.g. a prompt whose response is all masked
        if config.cause == "zero-token-denominator":
            lengths.zero_()  # every sequence empty: no token to average over
    mask = torch.arange(config.length) < lengths[:, None]
    features = features * mask[..., None]
    labels = (features @ teacher).argmax(dim=-1) * mask  # a linear teacher decides each label
    if step == config.unusual_step and config.cause == "nan-in-data":
        features[1, 0, 3] = math.nan  # one corrupt value in a real token
    return Batch(features, labels, mask)


class Sharpen(nn.Module):
    def __init__(self, temperature: float) -> None:
        super().__init__()
        self.temperature = temperature

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return logits / self.temperature


class ManualLogSoftmax(nn.Module):
    """log(softmax(z)): softmax rounds tiny probabilities to exactly 0, and log(0) is -inf."""

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.softmax(logits, dim=-1))


class TokenClassifier(nn.Module):
    def __init__(self, config: NanHuntConfig) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.ReLU(),
            nn.Linear(config.hidden, config.hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(config.hidden, config.classes)
        self.sharpen = Sharpen(config.temperature)
        manual = config.cause == "manual-log-softmax"
        # nn.LogSoftmax computes z - logsumexp(z): no probability is ever rounded to 0.
        self.log_probs = ManualLogSoftmax() if manual else nn.LogSoftmax(dim=-1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.log_probs(self.score(features))  # type: ignore[no-any-return]

    def score(self, features: torch.Tensor) -> torch.Tensor:
        """The sharpened logits, before the log-softmax."""
        return self.sharpen(self.head(self.body(features)))  # type: ignore[no-any-return]


def token_nll(log_probs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Negative log-likelihood of each token's label: (sequences, length)."""
    return -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def mean_over_tokens(nll: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the batch's real tokens: 0/0 = NaN when the batch has none."""
    weights = mask.to(nll.dtype)
    return (nll * weights).sum() / weights.sum()


def mean_over_sequences_masked_after(nll: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Each sequence's mean, then the mean over non-empty sequences; the bug is the order.

    An empty sequence divides 0 by 0, and torch.where swaps the NaN for 0 only afterwards. The
    forward value is finite, but backward still passes through the division: its gradient is
    0 / 0 = NaN, and where() multiplies nothing away (NaN * 0 is NaN).
    """
    weights = mask.to(nll.dtype)
    lengths = weights.sum(dim=-1)
    per_sequence = (nll * weights).sum(dim=-1) / lengths
    per_sequence = torch.where(lengths > 0, per_sequence, torch.zeros_like(per_sequence))
    return per_sequence.sum() / (lengths > 0).sum()


LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def largest_logit_gap(logits: torch.Tensor) -> float:
    """The largest top-minus-bottom logit gap over all tokens (padding included)."""
    gaps = logits.detach().amax(dim=-1) - logits.detach().amin(dim=-1)
    return float(gaps.max())


def parameter_norm(model: nn.Module) -> float:
    # float64: a diverging run's weights reach 1e19 and more, whose squares overflow float32.
    return math.sqrt(sum(float(p.detach().double().pow(2).sum()) for p in model.parameters()))


def gradient_norm(model: nn.Module) -> float:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return math.sqrt(sum(float(g.detach().double().pow(2).sum()) for g in grads))


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with the chosen cause injected and stop at the first non-finite tensor."""
    config = NanHuntConfig(cause=knobs["cause"])
    run = Run(seed, report)
    teacher = torch.randn(config.features, config.classes, generator=run.data_rng)
    model = TokenClassifier(config)
    lr = config.lr * (config.huge_lr_factor if config.cause == "huge-lr" else 1.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=config.momentum)
    run.watch(model, optimizer)
    loss_fn: LossFn = (
        mean_over_sequences_masked_after
        if config.cause == "mask-after-invalid"
        else mean_over_tokens
    )
    initial_norm = parameter_norm(model)

    # The whole stream up front (it is small), so the record can describe the unusual batch
    # even when training stops before reaching it.
    stream = [make_batch(config, run.data_rng, teacher, step) for step in range(config.steps)]

    # The finder, not Run.stop_if_nonfinite, stops this loop: it checks whole tensors stage by
    # stage and names the first bad one, which is the point of the drill.
    finding: Finding | None = None
    loss_at_finding: float | None = None  # finite, yet the gradients or the weights are not
    with FirstNonFinite(model) as finder:
        for step, batch in enumerate(stream):
            # One step, checked in the order it creates tensors; stop at the first bad one.
            finder.begin_step(step)
            finding = finder.check_data({"features": batch.features})
            if finding is not None:
                break
            # The forward pass in two calls, to watch the logits the log-softmax receives;
            # the finder's hooks check every module's output as it finishes.
            logits = model.score(batch.features)
            log_probs = model.log_probs(logits)
            gap = largest_logit_gap(logits)
            if math.isfinite(gap):
                run.log("logit_gap", step, gap)
            finding = finder.check_activations()
            if finding is not None:
                break
            loss = loss_fn(token_nll(log_probs, batch.labels), batch.mask)
            finding = finder.check_loss(loss)
            if finding is not None:
                break
            run.log("loss", step, loss.item())

            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            run.after_backward()
            finding = finder.check_gradients()
            if finding is not None:
                loss_at_finding = run.last("loss")
                break
            run.log("grad_norm", step, gradient_norm(model))

            optimizer.step()
            finding = finder.check_parameters()
            if finding is not None:
                loss_at_finding = run.last("loss")
                break
            run.log("weight_norm", step, parameter_norm(model))

    signature = NanHuntSignature(
        steps_completed=finding.step if finding is not None else config.steps,
        initial_loss=run.first("loss"),
        final_loss=run.tail_mean("loss") if finding is None else None,
        loss_at_finding=loss_at_finding,
        weight_growth=max([1.0, *(norm / initial_norm for norm in run.values("weight_norm"))]),
        max_logit_gap=max([0.0, *run.values("logit_gap")]),
        log_underflow_gap=LOG_UNDERFLOW_GAP,
        unusual_batch_step=config.unusual_step,
    )
    if finding is not None:
        signature.first_nonfinite_stage = finding.stage
        signature.first_nonfinite_name = finding.name
        signature.first_nonfinite_step = finding.step
        signature.first_nonfinite_kind = finding.kind
        signature.nonfinite_elements = finding.count
        signature.tensor_elements = finding.numel
    described = {step: stream[step] for step in (0, config.unusual_step)}
    return run.outcome(
        signature,
        inputs=describe_inputs(config, described),
        finding=None if finding is None else asdict(finding),
        tables=[finding_table(finding, config.steps)],
    )


STAGE_CHECKS = {
    "data": "the batch's input features",
    "activation": "every module's output, in the order the forward pass finishes them",
    "loss": "the loss value",
    "gradient": "every parameter's gradient, closest to the loss first",
    "parameter": "every parameter after the optimizer step",
}


def finding_table(finding: Finding | None, steps: int) -> dict[str, Any]:
    rows = []
    for stage in STAGES:
        if finding is None:
            result = f"finite on all {steps} steps"
        elif STAGES.index(stage) < STAGES.index(finding.stage):
            result = f"finite up to and including step {finding.step}"
        elif stage == finding.stage:
            result = (
                f"FIRST NON-FINITE at step {finding.step}: '{finding.name}', "
                f"{finding.count} of {finding.numel} elements {finding.kind}"
            )
        elif finding.step == 0:
            result = "not checked: training stopped at step 0"
        else:
            result = f"finite up to step {finding.step - 1}; not checked at step {finding.step}"
        rows.append([stage, STAGE_CHECKS[stage], result])
    note = (
        "No tensor went non-finite: the run finished."
        if finding is None
        else f"Training stopped at the first finding: {finding.describe()}."
    )
    return table(
        "first-nonfinite",
        "First non-finite tensor",
        ["stage", "checked", "result"],
        rows,
        note=note,
    )


def batch_digest(batch: Batch) -> str:
    sha = hashlib.sha256()
    for values, fmt in ((batch.features, "f"), (batch.labels, "q"), (batch.mask.long(), "q")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_batch(batch: Batch) -> dict[str, Any]:
    lengths = batch.mask.sum(dim=-1).tolist()
    nan_at = torch.isnan(batch.features).nonzero().tolist()
    return {
        "sha256": batch_digest(batch),
        "lengths": lengths,
        "real_tokens": int(batch.mask.sum()),
        "nan_at": nan_at,  # [sequence, token, feature] of each NaN
        "first_labels": batch.labels[0, : lengths[0]].tolist() if lengths[0] else [],
    }


def describe_inputs(config: NanHuntConfig, batches: dict[int, Batch]) -> dict[str, Any]:
    return {
        "shapes": {
            "features": [config.sequences, config.length, config.features],
            "labels": [config.sequences, config.length],
            "mask": [config.sequences, config.length],
        },
        "stream": (
            f"a fresh seeded batch every step; labels come from a fixed linear teacher; the batch "
            f"at step {config.unusual_step} holds an empty sequence"
        ),
        "batches": {str(step): describe_batch(batch) for step, batch in sorted(batches.items())},
    }
