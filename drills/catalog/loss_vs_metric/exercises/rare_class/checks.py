"""Runs outside the sandbox: the weights the learner's loop trained, loaded into the drill's
model here and scored on the judge's own examples (as many rare as common, never handed to the
learner's code), class by class. Nothing the loop reports is read, so how it evaluates (on which
examples, by which number) cannot reach the judge; only what training did to the weights can.

The model's answer is its larger logit. Weighing both classes alike, the best any classifier can
do on this data (the true posterior at equal shares) finds about 69% of the rare examples and
keeps about 69% of the common ones. Thresholds, from the reference, three right files and five
wrong ones on seeds 0-4 (two hidden runs each, 2% and 15% rare; the measured bands are in
tests/exercises/test_loss_vs_metric_fixes.py):
- RARE_FOUND: the share of the judge's rare examples the model calls rare. Right files find
  0.57-0.72; the starter (and any fix of its evaluation alone) none at 2% and 0.06-0.12 at 15%,
  a longer run at a lower rate none and 0.09-0.12; a correction sized for the starter's 5%
  finds 0.26-0.35 at 2%.
- COMMON_KEPT: the share of the judge's common examples it still calls common. Right files keep
  0.63-0.77; a correction made twice (a loss weighted by the class counts on batches already
  drawn to equal shares) 0-0.04 at 2% and 0.11-0.15 at 15%; one sized for 5%, 0.21-0.30 at 15%.
- BEST_GAP: balanced accuracy (the mean of the two shares) within this of the best classifier's
  on the same examples (0.68-0.70); right files come within 0.04, the starter is 0.15-0.20
  short, a correction made twice 0.13-0.19.
- NEVER_NAMED: a model that calls under 5% of the judge's examples rare (half of them are)
  answers "common" nearly every time, whatever its loop reported.

The drill's signature reads the trained model as the drill reads a run, on the rarer hidden
run: its accuracy and recall on the judge's examples, where accuracy weighs both classes alike
and a constant answer scores 0.5; and its losses (on the training examples and on the judge's)
weighed as the loop that trained it most likely weighed them: of the run's own class mix and
equal classes, the weighing under which the model improved most on its untrained start. A plain
loop lowers the first (the starter's model then reads as a majority vote: its loss fell, its
accuracy did not move), a fix the second, where it reads "aligned". Read under the run's mix
alone, a fix's loss ends above a plain model's, and often above its untrained start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.catalog.loss_vs_metric.exercises.rare_class.problem import (
    HELD_OUT,
    Problem,
    build,
    make_model,
    true_log_odds,
)
from drills.catalog.loss_vs_metric.fit import entropy
from drills.catalog.loss_vs_metric.signature import LossVsMetricSignature
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    total_change,
    weights_check,
)

RARE_FOUND = 0.45
COMMON_KEPT = 0.45
BEST_GAP = 0.07
NEVER_NAMED = 0.05
Weights = dict[str, torch.Tensor]


@dataclass(frozen=True)
class Scores:
    found: float  # share of the judge's rare examples the model calls rare
    kept: float  # share of its common examples the model calls common
    named: float  # share of all its examples the model calls rare
    best_found: float  # the same two for the true posterior at equal shares
    best_kept: float

    @property
    def balanced(self) -> float:
        return (self.found + self.kept) / 2

    @property
    def best(self) -> float:
        return (self.best_found + self.best_kept) / 2


@dataclass(frozen=True)
class Scored:
    where: str  # the run, in the learner's terms
    problem: Problem
    scores: Scores


def reference_weights(case: int, seed: int) -> Weights:
    return dict(build(case, seed).model.state_dict())


@torch.no_grad()
def logits(problem: Problem, weights: Weights, features: torch.Tensor) -> torch.Tensor:
    model = make_model(problem.config)
    model.load_state_dict(weights)
    answer: torch.Tensor = model(features)
    return answer


def scores(problem: Problem, weights: Weights) -> Scores:
    rare = problem.held_labels == 1
    called = logits(problem, weights, problem.held_features).argmax(dim=1) == 1
    best = true_log_odds(problem, problem.held_features, 0.5) > 0
    return Scores(
        found=float(called[rare].float().mean()),
        kept=float((~called[~rare]).float().mean()),
        named=float(called.float().mean()),
        best_found=float(best[rare].float().mean()),
        best_kept=float((~best[~rare]).float().mean()),
    )


def rare_finding(run: Scored) -> str | None:
    s = run.scores
    if s.found >= RARE_FOUND:
        return None
    if s.named < NEVER_NAMED:
        return (
            f"{run.where}: the trained model found {s.found:.1%} of the judge's rare examples and "
            f"called {s.named:.1%} of its examples rare, though half of them are: it answers "
            '"common" nearly every time. The judge scores the weights your loop leaves behind on '
            "examples of its own, so which examples your loop evaluates on, or which number it "
            "reports, changes nothing here; and the loss as your loop weighs it is lowest for a "
            'model that answers "common" wherever the classes overlap, however long or slowly it '
            "trains"
        )
    return (
        f"{run.where}: the trained model found {s.found:.0%} of the judge's rare examples; a fix "
        f"finds at least {RARE_FOUND:.0%} of them (the best classifier that weighs both classes "
        f"alike finds {s.best_found:.0%})"
    )


def common_finding(run: Scored) -> str | None:
    s = run.scores
    if s.kept >= COMMON_KEPT:
        return None
    text = (
        f"{run.where}: the trained model called {1 - s.kept:.0%} of the judge's common examples "
        "rare; a fix may give up some common examples for the rare ones it finds, but must still "
        f"call at least {COMMON_KEPT:.0%} of them common"
    )
    if s.named > 1 - NEVER_NAMED:
        text += (
            ': it answers "rare" nearly every time, so training weighed the rare class far above '
            "the common one, more than making up for its scarcity"
        )
    return text


def balanced_finding(run: Scored) -> str | None:
    s = run.scores
    if s.balanced >= s.best - BEST_GAP:
        return None
    return (
        f"{run.where}: the trained model's balanced accuracy (the mean of the share of rare "
        f"examples it finds and the share of common ones it keeps) is {s.balanced:.2f}; the best "
        f"any classifier reaches on these examples is {s.best:.2f}, and a fix comes within "
        f"{BEST_GAP:g} of it"
    )


def one_size_note(rare_short: list[Scored], common_short: list[Scored]) -> str:
    """Too few rare examples found where they are rarer, too many common ones called rare where
    they are commoner: what a correction of one fixed size does at two other shares."""
    rarer = [run.problem.share for run in rare_short if run.scores.named >= NEVER_NAMED]
    commoner = [run.problem.share for run in common_short]
    if not rarer or not commoner or min(rarer) >= max(commoner):
        return ""
    return (
        ". Too few found where rare examples are rarer and too many common ones called rare "
        "where they are commoner: that is what a correction of one fixed size does (a weight, a "
        "threshold or a shift chosen for one share of rare examples); size it from the labels "
        "your loop is given"
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    runs: list[Scored] = []
    for case in cases:
        if case.weights is None:
            continue
        problem = build(case.case, case.seed)
        s = scores(problem, case.weights)
        runs.append(Scored(f"{case.label} ({problem.share:.0%} rare)", problem, s))
        measurements[f"rare examples found ({case.label})"] = s.found
        measurements[f"common examples kept ({case.label})"] = s.kept
        measurements[f"balanced accuracy ({case.label})"] = s.balanced
        measurements[f"best balanced accuracy ({case.label})"] = s.best
    missing = [case for case in cases if case.weights is None]
    rare_short = [run for run in runs if rare_finding(run)]
    common_short = [run for run in runs if common_finding(run)]
    note = one_size_note(rare_short, common_short)
    found = {
        "finds-rare": [f"{rare_finding(run)}{note}" for run in rare_short],
        "keeps-common": [f"{common_finding(run)}{note}" for run in common_short],
        "balanced-accuracy": [text for run in runs if (text := balanced_finding(run))],
    }
    for key in ("finds-rare", "keeps-common", "balanced-accuracy"):
        if missing:
            checks.append(missing_evidence(exercise, key, missing))
        else:
            checks.append(findings_check(exercise, key, found[key], passed(key, runs)))
    first = next((case for case in cases if case.case == 0 and case.weights is not None), None)
    signature = None
    if first is not None and first.weights is not None:
        signature = signature_of(build(0, first.seed), first.initial, first.weights)
    return Assessment(checks, measurements, signature)


def passed(key: str, runs: list[Scored]) -> str:
    if key == "finds-rare":
        low = min(run.scores.found for run in runs)
        return (
            f"In every hidden run the trained model finds {low:.0%} or more of the rare examples."
        )
    if key == "keeps-common":
        low = min(run.scores.kept for run in runs)
        return (
            f"In every hidden run it still calls {low:.0%} or more of the common examples common."
        )
    gap = max(run.scores.best - run.scores.balanced for run in runs)
    return (
        f"Its balanced accuracy comes within {max(gap, 0.0):.2f} of the best in every hidden run."
    )


def weighed(losses: torch.Tensor, labels: torch.Tensor, mix: float) -> float:
    """The mean loss with the rare class weighed as `mix` of the examples (whatever its count)."""
    rare = labels == 1
    return float((1 - mix) * losses[~rare].mean() + mix * losses[rare].mean())


def signature_of(problem: Problem, initial: Weights, trained: Weights) -> LossVsMetricSignature:
    """The drill's numbers for the trained model: see the module's docstring."""
    held, labels = problem.held_features, problem.held_labels

    def losses(weights: Weights, features: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits(problem, weights, features), truth, reduction="none")

    # The loss the loop lowered: the judge cannot see it, so of the two ways to weigh the
    # classes (as the training examples come, or both alike) it takes the one under which the
    # trained model improved most on its untrained start.
    def fall(mix: float) -> float:
        start = weighed(losses(initial, held, labels), labels, mix)
        return 1 - weighed(losses(trained, held, labels), labels, mix) / start

    mix = max((problem.share, 0.5), key=fall)
    training = (problem.features, problem.labels)
    posterior = true_log_odds(problem, held, mix)
    best = F.binary_cross_entropy_with_logits(posterior, labels.float(), reduction="none")
    called = logits(problem, trained, held).argmax(dim=1) == 1
    rare = labels == 1
    found, alarms, total = int(called[rare].sum()), int(called[~rare].sum()), len(labels)
    return LossVsMetricSignature(
        initial_loss=weighed(losses(initial, *training), problem.labels, mix),
        final_loss=weighed(losses(trained, *training), problem.labels, mix),
        initial_eval_loss=weighed(losses(initial, held, labels), labels, mix),
        eval_loss=weighed(losses(trained, held, labels), labels, mix),
        constant_answer_loss=entropy([mix, 1 - mix]),
        best_loss=weighed(best, labels, mix),
        accuracy=(found + HELD_OUT - alarms) / total,
        majority_share=0.5,  # as many of each class: either constant answer scores a half
        minority_recall=found / HELD_OUT,
        predicted_minority_share=float(called.float().mean()),
        accuracy_gain=(found - alarms) / total,
        accuracy_gain_se=math.sqrt(found + alarms) / total,
        best_minority_recall=scores(problem, trained).best_found,
        weight_change=total_change(trained, initial),
    )
