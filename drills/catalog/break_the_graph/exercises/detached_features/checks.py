"""Runs outside the sandbox: which parameters moved, and the loss of the weights that came back.

A gradient leaves its trace in the weights: Adam moves a parameter only where it got a non-zero
gradient, and a non-finite one leaves NaN behind (which the weights check rejects). So "every
parameter gets a gradient and moves" is measured as each parameter's change from its initial
value (rebuilt here from the seed), relative to its size.

The drill's signature (BreakSignature) of the first run is filled from these measurements:
upstream/downstream params, updated and update norms (backbone / head movement), initial_loss
(rebuilt initial weights), final_loss (the trained weights, not the tail of a curve) and
chance_loss. The grad_none counts and the grad_fn flags are states inside the learner's loop
that no weight shows: they stay None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from drills.catalog.break_the_graph.exercises.detached_features.problem import (
    CONFIG,
    batch_loss,
    build,
)
from drills.catalog.break_the_graph.signature import BreakSignature
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    listed,
    missing_evidence,
    nats,
    relative_changes,
    result,
    still,
    total_change,
    weights_check,
)

FITS_BELOW = 0.1  # nats: an intact loop memorises this batch; the head alone stalls near 0.9
UPSTREAM, DOWNSTREAM = "backbone.", "head."


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(seed).model.state_dict())


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    usable = [case for case in cases if case.weights is not None]
    if len(usable) < len(cases):
        broken = [case for case in cases if case.weights is None]
        checks.append(missing_evidence(exercise, "every-layer-learns", broken))
        checks.append(missing_evidence(exercise, "loss-falls", broken))
        return Assessment(checks)

    measurements: dict[str, float | int | bool | str | None] = {}
    frozen: dict[str, list[str]] = {}
    losses: dict[str, float] = {}
    signature = None
    for case in usable:
        assert case.weights is not None
        problem = build(case.seed)
        initial_loss = batch_loss(problem.model, problem.data)
        changes = relative_changes(case.weights, case.initial)
        problem.model.load_state_dict(case.weights)
        loss = batch_loss(problem.model, problem.data)
        frozen[case.label] = still(changes, changes)
        losses[case.label] = loss
        measurements[f"loss ({case.label})"] = loss
        for part in (UPSTREAM, DOWNSTREAM):
            measurements[f"{part[:-1]} change ({case.label})"] = part_change(case, part)
        if signature is None:
            signature = signature_of(case, changes, initial_loss, loss)

    stuck = sorted({name for names in frozen.values() for name in names})
    if stuck:
        many = len(stuck) > 1
        checks.append(
            result(
                exercise,
                "every-layer-learns",
                "fail",
                f"{listed(stuck)} {'were' if many else 'was'} still at {'their' if many else 'its'}"
                " initial values after training: no gradient moved "
                f"{'them' if many else 'it'}. The other parameters did move.",
            )
        )
    else:
        checks.append(
            result(exercise, "every-layer-learns", "pass", "Every parameter moved in every run.")
        )
    high = {label: loss for label, loss in losses.items() if loss >= FITS_BELOW}
    if high:
        label, loss = max(high.items(), key=lambda item: item[1])
        message = (
            f"In {label} the loss of your trained weights is {nats(loss)}; a loop whose whole "
            f"model learns takes this batch under {FITS_BELOW:g} nats."
        )
        checks.append(result(exercise, "loss-falls", "fail", message))
    else:
        worst = max(losses.values())
        checks.append(
            result(exercise, "loss-falls", "pass", f"The trained loss is at most {nats(worst)}.")
        )
    return Assessment(checks, measurements, signature)


def part_change(case: CaseEvidence, prefix: str) -> float:
    """||trained - initial|| / ||initial|| over one part's parameters."""
    names = [name for name in case.initial if name.startswith(prefix)]
    assert case.weights is not None
    trained = {name: case.weights[name] for name in names}
    return total_change(trained, {name: case.initial[name] for name in names})


def signature_of(
    case: CaseEvidence, changes: dict[str, float], initial_loss: float, loss: float
) -> BreakSignature:
    assert case.weights is not None
    trained = case.weights

    def norm(prefix: str) -> float:
        return math.sqrt(
            sum(
                float((trained[name] - start).pow(2).sum())
                for name, start in case.initial.items()
                if name.startswith(prefix)
            )
        )

    def moved(prefix: str) -> int:
        names = [name for name in changes if name.startswith(prefix)]
        return len(names) - len(still(changes, names))

    return BreakSignature(
        upstream_params=sum(name.startswith(UPSTREAM) for name in changes),
        upstream_updated=moved(UPSTREAM),
        upstream_update_norm=norm(UPSTREAM),
        downstream_params=sum(name.startswith(DOWNSTREAM) for name in changes),
        downstream_updated=moved(DOWNSTREAM),
        downstream_update_norm=norm(DOWNSTREAM),
        initial_loss=initial_loss,
        final_loss=loss,
        chance_loss=math.log(CONFIG.classes),
    )
