"""Runs outside the sandbox: which parameters moved from where the fine-tuning started (the
backbone and the new head, rebuilt here from the seed), and the loss of the weights that came
back, measured here.

The drill's signature (MembershipSignature) of the first run is filled from these measurements:
grad_but_no_update and its backbone/head split count the parameters that have a non-zero
gradient at the start (computed here, on the rebuilt model) yet did not move; the update norms,
initial_loss, final_loss (the trained weights) and chance_loss too. What the optimizer held
(in_optimizer, not_in_optimizer, stale_optimizer_tensors) lives only inside the learner's loop:
it stays None, so the drill reads a head replaced after the optimizer was built as what the
weights show, a head left out of the optimizer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from drills.catalog.optimizer_membership.exercises.new_head.problem import (
    CONFIG,
    batch_loss,
    build,
    fine_tuned_model,
    initial_state,
)
from drills.catalog.optimizer_membership.signature import MembershipSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    listed,
    missing_evidence,
    nats,
    relative_changes,
    result,
    still,
    weights_check,
)
from drills.kit.backbone_head import Data

FITS_BELOW = 0.1  # nats: the whole model memorises this batch


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return initial_state(build(seed))


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    broken = [case for case in cases if case.weights is None]
    if broken:
        for key in ("new-head-learns", "backbone-learns", "loss-falls"):
            checks.append(missing_evidence(exercise, key, broken))
        return Assessment(checks)

    measurements: dict[str, float | int | bool | str | None] = {}
    still_head: set[str] = set()
    still_backbone: set[str] = set()
    losses = {}
    signature = None
    for case in cases:
        assert case.weights is not None
        changes = relative_changes(case.weights, case.initial)
        still_head.update(still(changes, [n for n in changes if n.startswith("head.")]))
        still_backbone.update(still(changes, [n for n in changes if n.startswith("backbone.")]))
        problem = build(case.seed)
        start = fine_tuned_model(case.initial)
        loss = batch_loss(fine_tuned_model(case.weights), problem.data)
        losses[case.label] = loss
        measurements[f"loss ({case.label})"] = loss
        measurements[f"head change ({case.label})"] = max(
            changes[n] for n in changes if n.startswith("head.")
        )
        if signature is None:
            signature = signature_of(case, changes, start, problem.data, loss)

    checks.append(moved_check(exercise, "new-head-learns", sorted(still_head), "the new head"))
    checks.append(moved_check(exercise, "backbone-learns", sorted(still_backbone), "the backbone"))
    checks.append(loss_check(exercise, losses))
    return Assessment(checks, measurements, signature)


def moved_check(exercise: Exercise, key: str, stuck: list[str], part: str) -> CheckResult:
    if not stuck:
        return result(exercise, key, "pass", f"Every parameter of {part} moved in every run.")
    return result(
        exercise,
        key,
        "fail",
        f"{listed(stuck)} ended at exactly the values {part} started with, although the loss "
        f"depends on {'them' if len(stuck) > 1 else 'it'}: nothing updated "
        f"{'them' if len(stuck) > 1 else 'it'}.",
    )


def loss_check(exercise: Exercise, losses: dict[str, float]) -> CheckResult:
    label, worst = max(losses.items(), key=lambda item: item[1])
    if worst < FITS_BELOW:
        return result(exercise, "loss-falls", "pass", f"The trained loss is at most {nats(worst)}.")
    return result(
        exercise,
        "loss-falls",
        "fail",
        f"In {label} the loss of your trained weights is {nats(worst)}; fine-tuning the whole "
        f"model takes this batch under {FITS_BELOW:g} nats.",
    )


def signature_of(
    case: CaseEvidence,
    changes: dict[str, float],
    start: torch.nn.Module,
    data: Data,
    loss: float,
) -> MembershipSignature:
    """The drill's numbers; the gradient is taken here, at the rebuilt starting weights."""
    assert case.weights is not None
    start.train()
    start.zero_grad(set_to_none=True)
    initial_loss = F.cross_entropy(start(data.features), data.labels)
    initial_loss.backward()  # type: ignore[no-untyped-call]
    grads = {
        name: p.grad is not None and float(p.grad.norm()) > 0 and bool(p.grad.isfinite().all())
        for name, p in start.named_parameters()
    }
    frozen = set(still(changes, changes))

    def grad_but_still(prefix: str) -> int:
        return sum(grads[n] and n in frozen for n in grads if n.startswith(prefix))

    trained = case.weights

    def norm(prefix: str) -> float:
        return math.sqrt(
            sum(
                float((trained[n] - t).pow(2).sum())
                for n, t in case.initial.items()
                if n.startswith(prefix)
            )
        )

    return MembershipSignature(
        model_params=len(grads),
        grad_but_no_update=grad_but_still(""),
        backbone_grad_but_no_update=grad_but_still("backbone."),
        head_grad_but_no_update=grad_but_still("head."),
        backbone_update_norm=norm("backbone."),
        head_update_norm=norm("head."),
        initial_loss=float(initial_loss.detach()),
        final_loss=loss,
        chance_loss=math.log(CONFIG.classes),
    )
