"""The judge's reading of one probe: what came back from the learner's Function (the loss, and
the gradient its backward gave pred) against the plain loss's value and autograd gradient in
float64, element by element, and each mismatch put in the learner's terms: which beta, which
part of the loss (quadratic, linear, next to beta), a padded step or a log with no real step.
Runs outside the sandbox; nothing here calls learner code.

The error of one element is |yours - true| / max(|yours|, full), where `full` is the gradient a
slope of 1 gives that step (|grad_output| over the log's real steps and the logs that have any):
0 for a right backward up to rounding, between 0 and 2 otherwise, and 2 where yours is NaN or
infinite. A right backward reaches about 1e-16 in float64, or 1e-7 if it rounds through float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from drills.catalog.gradient_check.exercises.smooth_l1_backward.problem import (
    EDGE,
    Probe,
    reference_gradient,
)

# Ratios of yours to the true gradient count as one constant when they agree this closely.
SAME_RATIO = 1e-6


@dataclass(frozen=True)
class Reading:
    probe: Probe
    loss: float | None  # what the Function returned (None: nothing usable came back)
    true_loss: float
    gradient: torch.Tensor | None  # what the backward gave pred (None: no gradient)
    truth: torch.Tensor  # the loss's gradient, times grad_output
    full: torch.Tensor  # per element, the gradient a slope of 1 gives that step
    error: torch.Tensor  # per element, see the module's docstring

    @property
    def real(self) -> torch.Tensor:
        return self.probe.mask

    @property
    def residual(self) -> torch.Tensor:
        return self.probe.pred - self.probe.target


def received(values: dict[str, torch.Tensor], name: str, like: torch.Tensor) -> torch.Tensor | None:
    found = values.get(name)
    if found is None or tuple(found.shape) != tuple(like.shape) or not found.is_floating_point():
        return None
    return found.double()


def read(values: dict[str, torch.Tensor], probe: Probe, index: int) -> Reading:
    true_loss, truth = reference_gradient(probe)
    value = received(values, f"loss-{index}", torch.zeros(1))
    gradient = received(values, f"gradient-{index}", probe.pred)
    counts = probe.mask.sum(dim=1, keepdim=True).clamp_min(1).double()
    logs = max(int((probe.mask.sum(dim=1) > 0).sum()), 1)
    full = (abs(probe.grad_output) / (counts * logs)).expand_as(truth)
    mine = torch.zeros_like(truth) if gradient is None else gradient  # none: nothing moves
    error = (mine - truth).abs() / torch.maximum(mine.abs(), full)
    error = torch.where(torch.isfinite(mine), error, torch.full_like(error, 2.0))
    loss = None if value is None else float(value[0])
    return Reading(probe, loss, true_loss, gradient, truth, full, error)


def loss_finding(reading: Reading, tolerance: float) -> str | None:
    beta, truth = reading.probe.beta, reading.true_loss
    if reading.loss is None:
        return f"at beta = {beta:g}, the loss MaskedSmoothL1 returned did not come back"
    error = abs(reading.loss - truth) / max(abs(truth), 1e-12)
    if error <= tolerance:
        return None
    return (
        f"at beta = {beta:g}, MaskedSmoothL1 returned a loss of {reading.loss:.6g} on the "
        f"judge's logs; the masked smooth L1 there is {truth:.6g}"
    )


def part(residual: float, beta: float) -> str:
    """Which part of the loss a real step's residual sits in, in words."""
    edge = abs(abs(residual) - beta) <= 1.01 * EDGE * beta
    if abs(residual) < beta:
        return "the quadratic part, |pred - target| < beta" + (", just below it" if edge else "")
    return "the linear part, |pred - target| >= beta" + (", just above it" if edge else "")


def where_in_part(reading: Reading, worst: tuple[int, int]) -> torch.Tensor:
    """The real steps on the same side of beta as the worst one."""
    inside = reading.residual.abs() < reading.probe.beta
    return reading.real & (inside if bool(inside[worst]) else ~inside)


def constant_ratio(reading: Reading, among: torch.Tensor) -> float | None:
    """Yours over the true gradient, if it is one number over `among` (where the true one is
    not near 0); None otherwise."""
    assert reading.gradient is not None
    usable = among & (reading.truth.abs() > 1e-3 * reading.full)
    if not bool(usable.any()):
        return None
    ratios = reading.gradient[usable] / reading.truth[usable]
    if not bool(torch.isfinite(ratios).all()):
        return None
    middle = float(ratios.mean())
    spread = float((ratios - middle).abs().max())
    return middle if spread <= SAME_RATIO * max(abs(middle), 1e-12) else None


def ratio_note(reading: Reading, worst: tuple[int, int]) -> str:
    everywhere = constant_ratio(reading, reading.real)
    g = reading.probe.grad_output
    if everywhere is not None:
        if abs(everywhere * g - 1) <= 1e-6:
            return (
                f"; at every real step yours is {everywhere:.3g} times the true gradient: the "
                f"judge multiplied the loss by {g:.3g} before backward, and a backward must "
                "multiply by the grad_output it is handed"
            )
        if everywhere == 0:
            return "; at every real step yours is 0: no gradient reaches the model"
        return (
            f"; at every real step yours is {everywhere:.3g} times the true gradient: the same "
            "direction, another size"
        )
    here = constant_ratio(reading, where_in_part(reading, worst))
    if here is not None:
        return f"; yours is {here:.3g} times the true gradient at every real step in that part"
    return ""


def real_finding(reading: Reading, tolerance: float) -> str | None:
    beta = reading.probe.beta
    if reading.gradient is None:
        return f"at beta = {beta:g}, your backward gave pred no gradient at all"
    error = torch.where(reading.real, reading.error, torch.zeros_like(reading.error))
    if float(error.max()) <= tolerance:
        return None
    flat = int(error.argmax())
    worst = (flat // error.shape[1], flat % error.shape[1])
    residual = float(reading.residual[worst])
    wrong, real = int((error > tolerance).sum()), int(reading.real.sum())
    return (
        f"at beta = {beta:g}, on a real step where pred - target = {residual:.4g} "
        f"({part(residual, beta)}), your backward gives pred a gradient of "
        f"{float(reading.gradient[worst]):.4g}; the loss's is {float(reading.truth[worst]):.4g} "
        f"({wrong} of {real} real steps are off{ratio_note(reading, worst)})"
    )


def padding_finding(reading: Reading, tolerance: float) -> str | None:
    beta = reading.probe.beta
    if reading.gradient is None:
        return f"at beta = {beta:g}, your backward gave pred no gradient at all"
    outside = ~reading.real
    error = torch.where(outside, reading.error, torch.zeros_like(reading.error))
    if float(error.max()) <= tolerance:
        return None
    flat = int(error.argmax())
    worst = (flat // error.shape[1], flat % error.shape[1])
    count = int(reading.real[worst[0]].sum())
    wrong = int((error > tolerance).sum())
    given = float(reading.gradient[worst])
    step = "a log with no real step" if count == 0 else f"a log with {count} real steps"
    return (
        f"at beta = {beta:g}, on a padded step of {step}, your backward gives pred a gradient "
        f"of {given:.4g}; the loss does not depend on that step, so its gradient is 0 ({wrong} "
        f"of the {int(outside.sum())} padded steps are given one)"
    )
