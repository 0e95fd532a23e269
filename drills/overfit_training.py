"""The training loop of "Overfit a single batch", with the chosen data bug injected.

Kept apart from the drill's description (drills/overfit_one_batch.py) so that only a worker
process that actually trains imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from drills.base import DrillError, DrillOutcome, Reporter, SignatureValue
from drills.curves import tail_mean, tail_std
from drills.diagnostics import ParameterAudit, relative_weight_change, total_grad_norm
from drills.overfit_setup import (
    MLP,
    PADDING,
    OverfitConfig,
    broadcast_mse,
    describe_inputs,
    entropy_of_labels,
    make_batch,
    probability_of_true_class,
)

# Every run reports every key (None where a number does not apply), so records line up.
SIGNATURE_KEYS = (
    "examples",
    "supervised_targets",
    "steps_run",
    "initial_loss",
    "final_loss",
    "min_loss",
    "loss_noise",
    "eval_loss",
    "final_p_correct",
    "chance_loss",
    "label_entropy",
    "target_variance",
    "weight_change",
    "nonfinite_step",
    "raw_loss_finite",
)

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on one fixed batch with the chosen bug injected; see OverfitOneBatch."""
    config = OverfitConfig(
        examples=knobs["examples"], bug=knobs["bug"], lr=knobs["lr"], steps=knobs["steps"]
    )
    bug, classes = config.bug, config.classes
    batch = make_batch(config, seed)
    regress_score = bug == "broadcast-target"
    randomness_on = bug == "randomness-on"

    # What the loss compares the predictions with.
    loss_fn: LossFn
    torch_warnings: set[str] = set()
    if regress_score:
        targets = batch.scores

        def loss_fn(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            value, caught = broadcast_mse(prediction, target)
            torch_warnings.update(caught)  # keep torch's warning as evidence
            return value

        outputs = 1
    else:
        targets = batch.labels.clone()
        if bug == "all-padding":
            targets.fill_(PADDING)
        loss_fn, outputs = F.cross_entropy, config.classes

    model = MLP(config, outputs)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    audit = ParameterAudit(model, optimizer)
    # The overfit check is meant to run with randomness off: eval mode disables dropout.
    model.train(randomness_on)

    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    signature |= {
        "examples": config.examples,
        "supervised_targets": int((targets != PADDING).sum()) if not regress_score else None,
        "chance_loss": math.log(config.classes),
        "label_entropy": None if regress_score else entropy_of_labels(batch.labels, classes),
        "target_variance": float(targets.var(correction=0)) if regress_score else None,
    }
    inputs = describe_inputs(batch, targets, bug)

    if signature["supervised_targets"] == 0:
        raw = F.cross_entropy(model(batch.features), targets, ignore_index=PADDING)
        message = (
            f"no supervised targets: all {config.examples} labels are masked as padding "
            f"(ignore_index={PADDING}), so the mean cross-entropy is 0/0 = {raw.item()}; "
            "there is nothing to train on"
        )
        signature["raw_loss_finite"] = bool(torch.isfinite(raw))
        diagnostics = {"parameters": audit.rows(), "loss_sum": 0.0, "loss_count": 0}
        outcome = DrillOutcome(signature, diagnostics, inputs, error=message)
        raise DrillError(message, outcome=outcome)

    losses: list[float] = []
    p_correct: list[float] = []
    nonfinite_step: int | None = None
    for step in range(config.steps):
        x = batch.features
        if randomness_on:
            x = x + config.augment_noise * torch.randn_like(x)  # fresh noise every step
        step_targets = targets
        if bug == "shuffled-labels":
            step_targets = targets[torch.randperm(config.examples)]

        output = model(x)
        loss = loss_fn(output, step_targets)
        if not math.isfinite(loss.item()):
            nonfinite_step = step  # diverged: stop rather than plot NaN
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        audit.after_backward()
        grad_norm = total_grad_norm(model.parameters())
        if not math.isfinite(grad_norm):
            nonfinite_step = step
            break
        optimizer.step()

        losses.append(loss.item())
        report.metric("loss", step, losses[-1])
        if not regress_score:
            p_correct.append(probability_of_true_class(output, batch.labels))
            report.metric("p_correct", step, p_correct[-1])
        report.metric("grad_norm", step, grad_norm)

    # Re-measure the final weights without training noise, against the true targets.
    model.eval()
    with torch.no_grad():
        eval_loss = loss_fn(model(batch.features), targets).item()
    rows = audit.rows()
    signature |= {
        "steps_run": len(losses),
        "initial_loss": losses[0] if losses else None,
        "final_loss": tail_mean(losses),
        "min_loss": min(losses) if losses else None,
        "loss_noise": tail_std(losses),
        "final_p_correct": tail_mean(p_correct),
        "eval_loss": eval_loss if math.isfinite(eval_loss) else None,
        "weight_change": relative_weight_change(rows),
        "nonfinite_step": nonfinite_step,
    }
    diagnostics = {"parameters": rows, "torch_warnings": sorted(torch_warnings)}
    return DrillOutcome(signature, diagnostics, inputs)
