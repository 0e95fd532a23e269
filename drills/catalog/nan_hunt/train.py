"""The training loop of "Hunt the NaN": a token classifier trained with a first-non-finite finder.

Every step is checked stage by stage (data, activations, loss, gradients, parameters) and
training stops at the first non-finite tensor. Kept apart from the drill's description
(__init__.py) so that only a worker process that trains imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import torch

from drills.catalog.nan_hunt.evidence import describe_inputs, finding_table
from drills.catalog.nan_hunt.numerics import LOG_UNDERFLOW_GAP
from drills.catalog.nan_hunt.setup import (
    NanHuntConfig,
    TokenClassifier,
    gradient_norm,
    largest_logit_gap,
    make_batch,
    mean_over_sequences_masked_after,
    mean_over_tokens,
    parameter_norm,
    token_nll,
)
from drills.catalog.nan_hunt.signature import NanHuntSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.nonfinite import Finding, FirstNonFinite
from drills.kit.run import Run

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with the chosen cause injected and stop at the first non-finite tensor."""
    config = NanHuntConfig(cause=knobs["cause"], unusual_step=knobs["unusual_step"])
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
