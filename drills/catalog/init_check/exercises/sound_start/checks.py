"""Runs outside the sandbox: each hidden network is rebuilt here at the weights init_weights()
left and read before any update on the hidden batch (reading.py: the loss against ln(C), every
hidden layer's activations and dead units, every layer's gradient), then a copy is trained here
with the drill's SGD. Nothing the learner's code reports is read.

Thresholds, set from the reference solution, three other right inits and five wrong ones on
seeds 0-39 (four hidden networks each; the tests judge seeds 0-4,
tests/exercises/test_init_check_fixes.py):
- FIRST_LOSS: the loss before any update within 20% of ln(C). Right inits start at 0.96-1.06
  of it (PyTorch's default on the two-class network, whose output biases decide its logits,
  reaches 1.10 on one seed in 400); the starter at 184-2,730 times it; one weight scale
  written for width 64 at 1.5-2.7 times on the wider network; the starter with only its
  output layer shrunk at 1.02-2.85 (over 1.2 somewhere on 34 seeds in 40). A first loss well
  below ln(C) cannot come from an init: it would have to know the data.
- ACTIVATION_SIZE: the RMS of each hidden layer's output over the inputs' RMS, 1/50 to 10.
  Right inits keep 0.033-1.7 (PyTorch's default shrinks the signal by about half a layer, its
  biases hold it up); the starter's weights grow it to 31-491 by the last hidden layer, weights
  of 0.01 shrink it to 1e-6-5e-3, zeros and dead layers to 0.
- GRADIENT_BAND: each layer's gradient norm (weight and bias) at step 0 at least 1/100 of the
  layer above's, the output layer being above the last hidden one. Right inits: 0.046 and up
  (under their small output layers); the starter with its output layer divided by 1000:
  5e-4 to 1.4e-3. A gradient of exactly 0 (under a dead layer, or a zero output layer) or
  one that is not finite fails.
- DEAD_AT_MOST: no more than three quarters of a hidden layer's units output 0 for every
  example. Right inits 0-0.47 (PyTorch's default on the deeper network; 0.5 at most in 400
  seeds); hidden biases of -1.5 kill 88-100% of a layer of every network but the wider one;
  all-zero weights, every unit.
- Units that start identical (the same weights and bias, bit for bit) fail: they get the same
  gradient at every step and never come apart.
- LEARNS_BELOW: after the drill's 100 full-batch steps (SGD, lr 0.1, momentum 0.9) the mean
  loss of the last tenth within 0.8 ln(C) (the drill's LEARNS_BY), and never NaN. Right inits
  end at 0.16 ln(C) or below; networks that learn only the class frequencies, at 0.81-1.0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from drills.catalog.init_check import DRILL, LEARNS_BY
from drills.catalog.init_check.exercises.sound_start.problem import build, make_model, shape_of
from drills.catalog.init_check.exercises.sound_start.reading import (
    Reading,
    numbers,
    read,
    signature_of,
)
from drills.catalog.init_check.signature import InitSignature
from drills.exercises.contract import CheckResult, CheckStatus, Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, result

FIRST_LOSS = (0.8, 1.2)  # the loss before any update, over ln(C)
ACTIVATION_SIZE = (1 / 50, 10.0)  # a hidden layer's RMS over the inputs'
GRADIENT_BAND = 1 / 100  # a layer's gradient norm over the layer above's
DEAD_AT_MOST = 0.75  # share of a hidden layer's units that never fire
LEARNS_BELOW = 1 - LEARNS_BY  # of ln(C): where the trained loss must end
BAD_STARTS = ("too-large", "vanishing", "dead-units")  # the drill's verdicts on a start
MEASURED = ("first-loss", "activations", "gradients", "live-units", "units-differ", "learns")


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    """The layout init_weights() must leave: the network's own parameters, float32."""
    return dict(make_model(shape_of(case, seed)).state_dict())


def name(index: int, layers: int) -> str:
    """Layer `index` of `layers` (the last is the output) in the learner's words."""
    return "the output layer" if index == layers - 1 else f"hidden layer {index + 1}"


# -- what each check finds, per hidden network, in the learner's terms ------------------------


Finding = tuple[float, str]  # how far out of its band (to show the worst first), and what


def first_loss_finding(r: Reading) -> Finding | None:
    low, high = FIRST_LOSS
    if low <= r.ratio <= high:
        return None
    shape = r.problem.shape
    said = (
        f"on {r.label}, the loss before any update is {r.loss:.3g} nats, {r.ratio:.3g} times "
        f"ln({shape.classes}) = {shape.chance:.3g}"
    )
    if math.isfinite(r.loss) and r.ratio < low:
        said += ": lower than a network that knows nothing can score on data it has not seen"
    else:
        said += (
            f": the logits start far from equal (mean |logit| {r.logit_size:.3g}), so the "
            "network starts out sure of guesses it has not learned"
        )
        if r.saturated >= 0.005:
            said += f" (for {r.saturated:.0%} of the examples, one class above 0.99)"
    return far(r.ratio), said


def activations_finding(r: Reading) -> Finding | None:
    low, high = ACTIVATION_SIZE
    out = [(i, size) for i, size in enumerate(r.sizes) if not low <= size <= high]
    if not out:
        return None
    index, size = max(out, key=lambda pair: far(pair[1]))
    said = f"on {r.label}, hidden layer {index + 1}'s activations are "
    if size == 0:
        said += "exactly 0 for every example: no signal gets through to it"
    elif not math.isfinite(size) or size > high:
        said += f"{size:.3g} times the size of the inputs (RMS): each layer multiplies them"
    else:
        said += f"{size:.2g} times the size of the inputs (RMS): the signal fades on the way up"
    return far(size), said


def gradients_finding(r: Reading) -> Finding | None:
    layers = len(r.grads)
    zero = [i for i, g in enumerate(r.grads) if g == 0 or not math.isfinite(g)]
    if zero:
        top = max(zero)
        what = "not a number" if not math.isfinite(r.grads[top]) else "exactly 0"
        below = " (and every layer below it)" if top > 0 and zero == list(range(top + 1)) else ""
        return math.inf, (
            f"on {r.label}, the gradient of {name(top, layers)}{below} at step 0 is {what}: "
            "nothing is passed back to it, so it cannot learn"
        )
    index, ratio = min(enumerate(r.ratios), key=lambda pair: pair[1])
    if ratio >= GRADIENT_BAND:
        return None
    return far(ratio), (
        f"on {r.label}, the gradient of {name(index, layers)} at step 0 is {ratio:.1e} of "
        f"{name(index + 1, layers)}'s ({r.grads[index]:.2g} against {r.grads[index + 1]:.2g}): "
        "the layers below it learn next to nothing while the one above learns"
    )


def live_units_finding(r: Reading) -> Finding | None:
    index, share = max(enumerate(r.dead), key=lambda pair: pair[1])
    if share <= DEAD_AT_MOST:
        return None
    width = r.problem.shape.hidden[index]
    return share, (
        f"on {r.label}, {share:.0%} of hidden layer {index + 1}'s {width} ReLUs output 0 for "
        "every example: they pass nothing forward and no gradient back"
    )


def units_differ_finding(r: Reading) -> Finding | None:
    for index, distinct in enumerate(r.distinct):
        width = r.problem.shape.hidden[index]
        if distinct < width:
            return 1 - distinct / width, (
                f"on {r.label}, the {width} units of hidden layer {index + 1} start as only "
                f"{distinct} different one{'s' if distinct > 1 else ''} (the same weights and "
                "bias): units that start identical get identical gradients and stay identical"
            )
    return None


def learns_finding(r: Reading) -> Finding | None:
    shape = r.problem.shape
    steps = len(r.losses)
    if not math.isfinite(r.final):
        return math.inf, (
            f"on {r.label}, the judge's training loss stopped being a number at step {steps - 1}"
        )
    if r.final <= LEARNS_BELOW * shape.chance:
        return None
    return r.final / shape.chance, (
        f"on {r.label}, after {steps} steps of the judge's SGD the loss is {r.final:.3g} nats, "
        f"{r.final / shape.chance:.0%} of ln({shape.classes}): the network has learned next to "
        "nothing"
    )


def far(value: float) -> float:
    """How far a ratio sits from 1, either way (0 and non-finite values: infinitely far)."""
    return abs(math.log(value)) if value > 0 and math.isfinite(value) else math.inf


FINDINGS = {
    "first-loss": first_loss_finding,
    "activations": activations_finding,
    "gradients": gradients_finding,
    "live-units": live_units_finding,
    "units-differ": units_differ_finding,
    "learns": learns_finding,
}
PASSED = {
    "first-loss": "On every hidden network the loss before any update is within 20% of ln(C).",
    "activations": "Every hidden layer's activations stay within 1/50 and 10 times the inputs'.",
    "gradients": "At step 0 every layer gets a gradient, none below 1/100 of the layer above's.",
    "live-units": "No hidden layer starts with more than three quarters of its ReLUs dead.",
    "units-differ": "The units of every hidden layer start different from one another.",
    "learns": "On every hidden network the judge's training took the loss below 0.8 ln(C).",
}


# -- the assessment -----------------------------------------------------------------------------


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases)]
    readings = [read(build(c.case, c.seed), c.weights) for c in cases if c.weights is not None]
    unusable = [case for case in cases if case.weights is None]
    findings: dict[str, list[Finding]] = {key: [] for key in MEASURED}
    failing: list[Reading] = []
    for reading in readings:
        found = {key: find(reading) for key, find in FINDINGS.items()}
        for key, finding in found.items():
            findings[key] += [finding] if finding else []
        failing += [reading] if any(found.values()) else []
    for key in MEASURED:
        if unusable:
            checks.append(not_measured(exercise, key, unusable))
        else:
            worst_first = [text for _, text in sorted(findings[key], key=lambda f: -f[0])]
            checks.append(findings_check(exercise, key, worst_first, PASSED[key]))
    measurements = {k: v for reading in readings for k, v in numbers(reading).items()}
    return Assessment(checks, measurements, drill_signature(readings, failing))


def drill_signature(readings: list[Reading], failing: list[Reading]) -> InitSignature | None:
    """The drill's signature of the network whose reading says most about what went wrong: of
    the networks a check failed on, the first the drill's diagnose() finds a bad start in
    (too large, vanishing, dead units), else the first it finds anything wrong with. None when
    it calls each of them healthy: its own lines are looser than the checks (a first loss is
    too large from twice ln(C) there), and "the start is sound" beside a failed check would
    mislead. The story's network when no check failed."""
    if not failing:
        story = next((reading for reading in readings if reading.problem.case == 0), None)
        return signature_of(story) if story is not None else None
    read_by_drill = [(signature, diagnosis(signature)) for signature in map(signature_of, failing)]
    for signature, verdict in read_by_drill:
        if verdict in BAD_STARTS:
            return signature
    return next((sig for sig, verdict in read_by_drill if verdict != DRILL.healthy), None)


def diagnosis(signature: InitSignature) -> str:
    return DRILL.diagnose(signature.as_dict(), None)


def weights_check(exercise: Exercise, cases: Sequence[CaseEvidence]) -> CheckResult:
    bad = [case for case in cases if case.weights is None]
    if not bad:
        return result(
            exercise,
            "weights",
            "pass",
            f"init_weights() set every parameter of all {len(cases)} hidden networks.",
        )
    return unmeasured(exercise, "weights", bad)


def unmeasured(exercise: Exercise, key: str, cases: Sequence[CaseEvidence]) -> CheckResult:
    """A check that could not be measured: "error" when the code crashed, else "fail"."""
    status: CheckStatus = "error" if any(case.error for case in cases) else "fail"
    case = cases[0]
    if case.error:
        text = case.unusable()
    elif case.weights_problem and "NaN" in case.weights_problem:
        text = (
            f"on {case.label}, {case.weights_problem.replace(' holds', ' still holds')} after "
            "init_weights(): the judge's networks arrive with every parameter unset, so set "
            "each weight and bias"
        )
    else:
        text = (
            f"on {case.label}, the network init_weights() left is not the one it was given: "
            f"{case.weights_problem}"
        )
    if len(cases) > 1:
        text += f" ({len(cases) - 1} more hidden network{'s' if len(cases) > 2 else ''} like it)"
    return result(exercise, key, status, text[0].upper() + text[1:] + ".")


def not_measured(exercise: Exercise, key: str, cases: Sequence[CaseEvidence]) -> CheckResult:
    """A check after the weights check failed: its reason once is enough."""
    if any(case.error for case in cases):
        return unmeasured(exercise, key, cases)
    text = f"Not measured: {len(cases)} of the hidden networks came back unusable (see above)."
    return result(exercise, key, "fail", text)
