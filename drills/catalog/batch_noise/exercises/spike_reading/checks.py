"""Runs outside the sandbox: each hidden run's model, training set and batch rebuilt here from
its seed, the report's numbers measured again in float64, and the learner's report compared
with them. Whether the batch is one the set could give is known here twice over: from how the
batch was made (problem.CASES) and from its loss against the worst batch of B, and the two agree
on every run (tests/exercises/test_spike_reading.py).

Tolerances, set from the reference solution, two other right files and four wrong ones on seeds
0-4 (35 hidden runs):
- LOSS_RTOL (0.1%) on batch_loss, set_loss and worst_batch_loss. Right files computing in
  float32 sit within 1.4e-7 of the float64 numbers. A summed batch loss is B times off; the
  set's largest single loss, taken for the worst batch of 4 to 64, is up to 2.6 times off, and
  the highest of 2,000 random batches as low as 0.37 times it.
- SIGMA_RTOL (0.5%) plus SIGMA_ATOL (0.01) on sigmas: n or n - 1 in the std (1.9e-3 apart at
  most, on sets of 256 and more) both pass; sigma / B for sigma / sqrt(B) is 2 to 8 times off.

No drill signature: the signature of "Batch size and noise" describes a training run, and one
reading of one batch has none, so the judgement carries no verdict.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.batch_noise.exercises.spike_reading.problem import (
    SpikeProblem,
    build,
    one_thread,
)
from drills.exercises.contract import Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, missing_evidence

LOSS_RTOL = 1e-3
SIGMA_RTOL, SIGMA_ATOL = 5e-3, 0.01
CORRUPT_ABOVE = 1.001  # the docstring's rule: more than 0.1% above the worst batch of B
CLEAN = ("hard", "ordinary")  # batches made of the set's own distinct examples


@dataclass(frozen=True)
class SpikeReport:
    batch_loss: float
    set_loss: float
    sigmas: float
    worst_batch_loss: float
    corrupt: bool


@dataclass(frozen=True)
class Truth:
    report: SpikeReport
    size: int  # B
    largest: float  # the set's largest single loss (what a wrong worst batch often is)
    spread: float  # the per-example losses' std (population)


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no model comes back: the harness sends an empty weights blob


@torch.no_grad()
def losses_of(problem: SpikeProblem) -> tuple[torch.Tensor, float]:
    """Every training example's loss and the batch's, in float64 (a float64 copy of the model)."""
    model = copy.deepcopy(problem.model).double()
    with one_thread():
        losses = F.cross_entropy(
            model(problem.data.features.double()), problem.data.labels, reduction="none"
        )
        batch = F.cross_entropy(model(problem.batch_features.double()), problem.batch_labels)
    return losses, float(batch)


def worst_of(problem: SpikeProblem, size: int) -> float:
    """The highest loss a batch of `size` distinct training examples can have: the mean of the
    `size` largest per-example losses (swapping any other example in can only lower it)."""
    return float(losses_of(problem)[0].topk(size).values.mean())


def truth_of(problem: SpikeProblem) -> Truth:
    """The report, measured here in float64."""
    losses, batch = losses_of(problem)
    size = len(problem.batch_labels)
    spread = float(losses.std(unbiased=False))
    worst = float(losses.topk(size).values.mean())
    report = SpikeReport(
        batch_loss=float(batch),
        set_loss=float(losses.mean()),
        sigmas=(float(batch) - float(losses.mean())) / (spread / math.sqrt(size)),
        worst_batch_loss=worst,
        corrupt=float(batch) > worst * CORRUPT_ABOVE,
    )
    return Truth(report, size, float(losses.max()), spread)


def learner_report(case: CaseEvidence) -> SpikeReport | None:
    values = case.values or {}
    numbers, corrupt = values.get("numbers"), values.get("corrupt")
    if numbers is None or corrupt is None:
        return None
    if numbers.dtype != torch.float64 or tuple(numbers.shape) != (4,):
        return None
    if corrupt.dtype != torch.bool or tuple(corrupt.shape) != (1,):
        return None
    batch_loss, set_loss, sigmas, worst = numbers.tolist()
    return SpikeReport(batch_loss, set_loss, sigmas, worst, bool(corrupt.item()))


def close(said: float, truth: float, rtol: float, atol: float = 0.0) -> bool:
    return math.isfinite(said) and abs(said - truth) <= rtol * abs(truth) + atol


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    found: dict[str, list[str]] = {key: [] for key in ("report", "losses", "sigmas")}
    found |= {"worst-batch": [], "verdict": []}
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        problem = build(case.case, case.seed)
        truth = truth_of(problem)
        right = truth.report
        measurements[f"batch loss / worst batch ({case.label})"] = (
            right.batch_loss / right.worst_batch_loss
        )
        measurements[f"sigmas ({case.label})"] = right.sigmas
        measurements[f"made from the set ({case.label})"] = problem.how in CLEAN
        said = learner_report(case)
        where = f"in case '{case.label}'"
        if said is None:
            for key in found:
                found[key].append(f"{where} no readable report came back")
            continue
        for key, text in compare(truth, said):
            found[key].append(f"{where} {text}")

    passed = {
        "report": f"Your function returned a readable report for all {len(cases)} hidden batches.",
        "losses": "You measured the batch's loss and the training set's right every time.",
        "sigmas": "You gave the spike's height in sigma / sqrt(B) right every time.",
        "worst-batch": "You found the worst batch of B the set allows every time.",
        "verdict": "You told every batch the set could give from every batch it could not.",
    }
    errored = [case for case in cases if case.error]
    checks = [
        missing_evidence(exercise, key, errored, shown=1)
        if errored
        else findings_check(exercise, key, found[key], text)
        for key, text in passed.items()
    ]
    return Assessment(checks, measurements)


def compare(truth: Truth, said: SpikeReport) -> list[tuple[str, str]]:
    right, size = truth.report, truth.size
    wrong = []
    for name, value, correct in (
        ("batch_loss", said.batch_loss, right.batch_loss),
        ("set_loss", said.set_loss, right.set_loss),
    ):
        if not close(value, correct, LOSS_RTOL):
            text = f"your {name} is {ratio(value, correct)} the mean cross-entropy measured here"
            if size > 1 and close(value, correct * size, LOSS_RTOL):
                text += f": it matches the sum over the batch's {size} examples"
            wrong.append(("losses", text))
            break
    if not close(said.sigmas, right.sigmas, SIGMA_RTOL, SIGMA_ATOL):
        wrong.append(("sigmas", sigmas_text(truth, said.sigmas)))
    if not close(said.worst_batch_loss, right.worst_batch_loss, LOSS_RTOL):
        wrong.append(("worst-batch", worst_text(truth, said.worst_batch_loss)))
    if said.corrupt != right.corrupt:
        share = right.batch_loss / right.worst_batch_loss
        if right.corrupt:
            text = (
                f"your function said a batch of the set could give this one; its loss is "
                f"{share:.3g} times the worst {batch_of(size)} can have"
            )
        else:
            text = (
                f"your function said no batch of the set could give this one; its loss is "
                f"{share:.3g} times the worst {batch_of(size)} can have, so a batch of the set "
                "reaches it"
            )
        wrong.append(("verdict", text))
    return wrong


def batch_of(size: int) -> str:
    if size == 1:
        return "a batch of one training example"
    return f"a batch of {size} distinct training examples"


def ratio(said: float, truth: float) -> str:
    if not math.isfinite(said):
        return f"{said} where a finite number is due, not"
    return f"{said / truth:.3g} times" if truth else f"{said:.3g}, not"


def sigmas_text(truth: Truth, said: float) -> str:
    size, right = truth.size, truth.report
    text = f"your sigmas is {ratio(said, right.sigmas)} the height measured here"
    gap = right.batch_loss - right.set_loss
    if size > 1 and close(said, gap / (truth.spread / size), SIGMA_RTOL, SIGMA_ATOL):
        text += f": it divides sigma by B = {size}, where a mean of B spreads as sigma / sqrt(B)"
    elif size > 1 and close(said, gap / truth.spread, SIGMA_RTOL, SIGMA_ATOL):
        text += f": it counts in sigma, not in the sigma / sqrt(B) a batch of {size} spreads by"
    return text


def worst_text(truth: Truth, said: float) -> str:
    right = truth.report.worst_batch_loss
    text = f"your worst_batch_loss is {ratio(said, right)} the worst measured here"
    if truth.size > 1 and close(said, truth.largest, LOSS_RTOL):
        return text + (
            f": it is the set's largest single loss; a batch of {truth.size} distinct examples "
            "averages its losses, and cannot hold the hardest one twice"
        )
    if math.isfinite(said) and said < right:
        if truth.size == 1:
            return text + ": the set's hardest example has a higher loss than that"
        return text + (
            f": the set's {truth.size} hardest examples together have a higher loss than that"
        )
    return text
