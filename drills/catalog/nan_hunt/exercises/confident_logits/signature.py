"""The drill's signature of a judged file, filled from what the judge measured outside the
sandbox, so that the drill's own diagnose() can read it: the first non-finite tensor the judge
met (what log_probs returned on the probe, then the gradient through it), and the training run
of the first hidden run (its held-out loss before and after, its weights' growth, the largest
logit gap the trained network reaches on held-out tokens)."""

from __future__ import annotations

import copy
import math

import torch

from drills.catalog.nan_hunt.exercises.confident_logits.harness import STEPPED
from drills.catalog.nan_hunt.exercises.confident_logits.problem import (
    CONFIG,
    STEPS,
    Problem,
    held_out_loss,
)
from drills.catalog.nan_hunt.numerics import LOG_UNDERFLOW_GAP
from drills.catalog.nan_hunt.signature import NanHuntSignature
from drills.exercises.evidence import CaseEvidence


def finite(tensor: torch.Tensor) -> bool:
    return bool(torch.isfinite(tensor).all())


def signature_of(case: CaseEvidence, problem: Problem) -> NanHuntSignature | None:
    """None when the code failed, or when weights came back non-finite with log_probs sound:
    then the first bad tensor lies somewhere in the loop the judge does not see."""
    if case.error:
        return None
    values = case.values or {}
    signature = NanHuntSignature(
        log_underflow_gap=LOG_UNDERFLOW_GAP, unusual_batch_step=CONFIG.unusual_step
    )
    found = None
    returned, gradient = values.get("log_probs"), values.get("gradient")
    if returned is not None and not finite(returned):
        found = ("activation", "log_probs", returned)
    elif gradient is not None and not finite(gradient):
        found = ("gradient", "logits", gradient)  # the gradient with respect to the logits
    if found is not None:
        stage, name, tensor = found
        signature.first_nonfinite_stage = stage
        signature.first_nonfinite_name = name
        signature.first_nonfinite_kind = "nan" if bool(torch.isnan(tensor).any()) else "inf"
        signature.nonfinite_elements = int((~torch.isfinite(tensor)).sum())
        signature.tensor_elements = tensor.numel()
    else:
        stepped = [value for name, value in values.items() if name.startswith(STEPPED)]
        if case.weights is None or not all(finite(value) for value in stepped):
            return None
    if case.weights is not None:
        signature.steps_completed = STEPS
        signature.initial_loss = held_out_loss(case.initial, problem)
        signature.final_loss = held_out_loss(case.weights, problem)
        signature.weight_growth = max(1.0, norm(case.weights) / norm(case.initial))
        signature.max_logit_gap = largest_gap(case.weights, problem)
    return signature


def norm(weights: dict[str, torch.Tensor]) -> float:
    return math.sqrt(sum(float(value.double().pow(2).sum()) for value in weights.values()))


def largest_gap(weights: dict[str, torch.Tensor], problem: Problem) -> float:
    """The largest top-minus-bottom logit gap of the trained network on held-out real tokens."""
    model = copy.deepcopy(problem.model).double()
    model.load_state_dict({name: value.double() for name, value in weights.items()})
    gaps = []
    with torch.no_grad():
        for batch in problem.held_out:
            logits = model(batch.features.double())[batch.mask]
            gaps.append(float((logits.amax(dim=-1) - logits.amin(dim=-1)).max()))
    return max(gaps)
