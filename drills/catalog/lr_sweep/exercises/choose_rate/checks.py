"""Runs outside the sandbox: plain SGD at the rate the learner's choose_lr() returned, trained
here on each hidden run and read step by step, and the loss of the weights the learner's train()
left behind, measured here. The rate is the learner's answer; nothing their code says about how
it trains is read.

What each check reads (thresholds from the reference solution, two other right files and five
wrong ones, two hidden runs each: seeds 0-4 in tests/exercises/test_lr_sweep_rate_fixes.py,
the right files also on seeds 5-24 and the wrong ones on 5-14):
- stable-rate: the judge's run at the rate, all STEPS steps, read by the drill's own
  rate_verdict(): unstable when the loss overflows, ends above its start, or once stands above
  SPIKE_ABOVE (1.5) times its start. Some rates look fine for a while and only then run off:
  the one-step pick 0.03 overflows on the wide network at step 59-142.
- pace: the steps the judge's run needs to bring the loss to a tenth of its start, against the
  fastest stable candidate's (the judge sweeps them all): at most PACE_FACTOR (5) times as many.
  Below the edge the steps grow about as 1 / rate: the right files need 1.0-3.0 times the
  fastest's steps, the rate of 1.0 / 10,000 8-28 times on the wide network and never gets there
  on the drill's. A rate too large to be stable is not slow: this check passes it and leaves it
  to stable-rate, so that each check fails for one reason.
- trains: the whole set's loss at the weights train() returned, against the loss at the initial
  weights: at most FALLS_TO (a tenth). The right files end at 0.016-2.3% of it; a loop that
  clips its gradient to a norm of 1e-3 at 74-87% (drill's network) and 99.5-99.7% (wide one),
  the rate of 1.0 / 10,000 at 96-98% on the drill's network.

The drill's signature (LrSweepSignature) is filled from one hidden run: the first where the
rate blew up, else the first where it was slow, else the drill's own network. It holds the
judge's runs at the learner's rate and at ten times it (a rate that trains well has its edge
within a factor of ten: "bracketed"; one that blows up reads "too-aggressive", one far too small
"too-cautious"), the curvature at the initial weights and the stability limit 2 / curvature
that plain gradient descent obeys.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.lr_sweep.exercises.choose_rate.problem import (
    CANDIDATES,
    STEPS,
    Curve,
    Problem,
    build,
    loss_at,
    one_thread,
    sgd_curve,
)
from drills.catalog.lr_sweep.problem import top_hessian_eigenvalue
from drills.catalog.lr_sweep.signature import LrSweepSignature
from drills.catalog.lr_sweep.verdicts import (
    FALLS,
    FLAT,
    SPIKE_ABOVE,
    UNSTABLE,
    rate_verdict,
)
from drills.core.curves import tail_mean
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    total_change,
    weights_check,
)

FALLS_TO = 0.1  # "falls by a band": the loss comes down to a tenth of its start
PACE_FACTOR = 5  # at most five times the steps the fastest stable candidate needs
POWER_ITERATIONS = 30  # for the curvature, as the drill takes it


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {name: t.detach().clone() for name, t in build(case, seed).model.state_dict().items()}


def verdict(curve: Curve) -> str:
    """The drill's reading of one run: non-finite, spikes, flat or falls."""
    final = tail_mean(curve.losses)
    assert final is not None  # the first loss is always finite: the initial weights are
    return rate_verdict(curve.losses[0], final, max(curve.losses), curve.nonfinite_step)


def reach(curve: Curve) -> int | None:
    """The first step at which the loss stood at a tenth of its start or below."""
    target = FALLS_TO * curve.losses[0]
    return next((step for step, loss in enumerate(curve.losses) if loss <= target), None)


@functools.lru_cache(maxsize=8)
def fastest_stable(case: int, seed: int) -> int | None:
    """The judge's own sweep of the candidates: the steps the fastest stable one needs to bring
    the loss to a tenth. A run is cut where it first jumps up (it is unstable then, whatever
    follows), so the sweep costs little more than its stable rates."""
    problem = build(case, seed)
    found = []
    for lr in CANDIDATES:
        curve = sgd_curve(problem, lr, cut_at_spike=True)
        steps = reach(curve)
        if verdict(curve) not in UNSTABLE and steps is not None:
            found.append(steps)
    return min(found, default=None)


@dataclass(frozen=True)
class RateReading:
    label: str
    lr: float
    curve: Curve  # the judge's run at the learner's rate, all STEPS steps
    fastest: int | None  # steps to a tenth of the fastest stable candidate

    @property
    def unstable(self) -> bool:
        return verdict(self.curve) in UNSTABLE


def rate_of(case: CaseEvidence) -> float | None:
    value = case.frames.value(case.case, "lr")
    number = value.value if value is not None else None
    return number if number is not None and number > 0 and math.isfinite(number) else None


def stable_finding(reading: RateReading) -> str | None:
    curve, start = reading.curve, reading.curve.losses[0]
    if not reading.unstable:
        return None
    text = f"on {reading.label}, plain SGD at your rate {reading.lr:g}"
    jumped = next(
        step for step, loss in enumerate(curve.losses + [math.inf]) if loss > SPIKE_ABOVE * start
    )
    if curve.nonfinite_step is not None and jumped >= curve.nonfinite_step:
        return text + f" ran the loss off to infinity at step {curve.nonfinite_step}"
    if curve.nonfinite_step is not None:
        return text + (
            f" sent the loss above {SPIKE_ABOVE:g} times its start at step {jumped}, and off to "
            f"infinity at step {curve.nonfinite_step}"
        )
    peak = max(curve.losses) / start
    if peak > SPIKE_ABOVE:
        return text + (
            f" sent the loss above {SPIKE_ABOVE:g} times its start at step {jumped}; it peaked "
            f"at {peak:.3g} times its start"
        )
    return text + " ended with the loss above where it started"


def pace_finding(reading: RateReading) -> str | None:
    if reading.unstable or reading.fastest is None:
        return None  # too large is not slow: stable-rate says so
    steps = reach(reading.curve)
    fastest = reading.fastest
    if steps is not None and steps <= PACE_FACTOR * max(fastest, 1):
        return None
    if steps is None:
        share = reading.curve.losses[-1] / reading.curve.losses[0]
        said = f"was still at {share:.0%} of its start after {STEPS} steps"
    else:
        said = f"needed {steps} steps to come down to a tenth of its start"
    return (
        f"on {reading.label}, at your rate {reading.lr:g} the loss {said}; the fastest stable "
        f"candidate gets there in {fastest} steps"
    )


def slow(reading: RateReading) -> bool:
    return pace_finding(reading) is not None


def trains_finding(case: CaseEvidence, share: float) -> str | None:
    """What the loss of the learner's trained weights says, `share` of the starting loss."""
    if share <= FALLS_TO:
        return None
    where = f"on {case.label}, the weights your train() left behind"
    if not math.isfinite(share):
        return f"{where} give a loss too large to measure"
    if share > 1:
        return f"{where} have a loss {share:.3g} times the starting one: it went up"
    assert case.weights is not None
    moved = f"the weights moved by {total_change(case.weights, case.initial):.2%} of their size"
    if share >= 0.5:
        return f"{where} still have {share:.0%} of the starting loss: it barely fell ({moved})"
    return f"{where} have {share:.0%} of the starting loss: it fell, not to a tenth ({moved})"


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    found: dict[str, list[str]] = {"stable-rate": [], "pace": [], "trains": []}
    readings: list[tuple[CaseEvidence, Problem, RateReading]] = []
    for case in cases:
        problem = build(case.case, case.seed)
        if case.weights is not None:
            share = loss_at(case.weights, problem) / loss_at(case.initial, problem)
            measurements[f"trained loss / start ({case.label})"] = share
            found["trains"].extend(filter(None, [trains_finding(case, share)]))
        lr = rate_of(case)
        if lr is None:
            continue
        reading = RateReading(
            case.label, lr, sgd_curve(problem, lr), fastest_stable(case.case, case.seed)
        )
        readings.append((case, problem, reading))
        measurements[f"rate ({case.label})"] = lr
        peak = max(reading.curve.losses) / reading.curve.losses[0]
        measurements[f"highest loss / start at the rate ({case.label})"] = peak
        measurements[f"overflow step at the rate ({case.label})"] = reading.curve.nonfinite_step
        measurements[f"steps to a tenth at the rate ({case.label})"] = reach(reading.curve)
        measurements[f"steps to a tenth, fastest candidate ({case.label})"] = reading.fastest
        for key, finding in (
            ("stable-rate", stable_finding(reading)),
            ("pace", pace_finding(reading)),
        ):
            if finding:
                found[key].append(finding)

    without_rate = [case for case in cases if rate_of(case) is None]
    without_weights = [case for case in cases if case.weights is None]
    stable_runs = [reading for _, _, reading in readings if not reading.unstable]
    paced = "on every hidden run" if len(stable_runs) == len(readings) else "where it was stable"
    passed = {
        "stable-rate": f"At your rate plain SGD kept the loss under {SPIKE_ABOVE:g} times its "
        f"start for all {STEPS} steps, on every hidden run.",
        "pace": f"At your rate the loss came down to a tenth within {PACE_FACTOR} times the "
        f"steps the fastest stable candidate needs, {paced}."
        if stable_runs
        else "Your rate is not slow: it is too large to be stable (see the check above).",
        "trains": f"The weights your train() left behind have at most {FALLS_TO:.0%} of the "
        "starting loss, on every hidden run.",
    }
    for key, text in passed.items():
        missing = without_weights if key == "trains" else without_rate
        if missing:
            checks.append(missing_evidence(exercise, key, missing))
        else:
            checks.append(findings_check(exercise, key, found[key], text))
    # The drill reads one run: the first where the rate blew up, else the first where it was
    # slow, else the drill's own network.
    shown = sorted(readings, key=lambda item: (not item[2].unstable, not slow(item[2])))
    signature = signature_of(*shown[0]) if readings else None
    return Assessment(checks, measurements, signature)


def signature_of(case: CaseEvidence, problem: Problem, reading: RateReading) -> LrSweepSignature:
    """The drill's signature of a two-rate sweep: the learner's rate and ten times it."""
    curves = [reading.curve, sgd_curve(problem, 10 * reading.lr)]
    start = curves[0].losses[0]
    signature = LrSweepSignature(optimizer="sgd", lr_count=2, steps=STEPS, initial_loss=start)
    signature.target_variance = float(problem.y.var(correction=0))
    verdicts = [verdict(curve) for curve in curves]
    stable: list[tuple[float, float]] = []  # (rate, final loss)
    for slot, (curve, found) in enumerate(zip(curves, verdicts, strict=True), start=1):
        final = tail_mean(curve.losses)
        assert final is not None
        signature.fill_slot(
            slot,
            lr=curve.lr,
            final_loss=final,
            loss_drop=(start - final) / start,
            max_loss=max(curve.losses),
            nonfinite_step=curve.nonfinite_step,
        )
        if found not in UNSTABLE:
            stable.append((curve.lr, final))
    unstable = [
        curve.lr for curve, found in zip(curves, verdicts, strict=True) if found in UNSTABLE
    ]
    if stable:
        signature.best_lr, signature.best_final_loss = min(stable, key=lambda pair: pair[1])
        signature.largest_stable_lr = max(lr for lr, _ in stable)
    signature.flat_count = verdicts.count(FLAT)
    signature.falling_count = verdicts.count(FALLS)
    signature.unstable_count = len(unstable)
    signature.smallest_unstable_lr = min(unstable, default=None)
    signature.sharpness = sharpness(problem, case.seed)
    if signature.sharpness > 0:
        signature.stability_limit = 2.0 / signature.sharpness
    return signature


def sharpness(problem: Problem, seed: int) -> float:
    """The top Hessian eigenvalue at the initial weights, as the drill estimates it."""
    model = problem.model
    parameters = list(model.parameters())
    with one_thread():
        return top_hessian_eigenvalue(
            lambda: F.mse_loss(model(problem.x), problem.y),
            parameters,
            POWER_ITERATIONS,
            torch.Generator().manual_seed(seed),
        )
