"""Runs outside the sandbox: the ids the learner's encode_for_evaluation() gave every hidden
evaluation ticket, set beside the training code's ids for the same tickets, and scored by a
router this module trains itself, on the training code's encoding, from the hidden seed.

Nothing the learner's code reports is read: only the ids it produced for tickets it was handed.

Thresholds, from the reference solution, three other right encoders, the starter and five wrong
ones on seeds 0-4 (two hidden runs each):
- "same-ids" asks for every ticket's ids to equal the training code's, exactly: any difference
  is a difference the model never trained on. (One wrong encoder, which drops the end token,
  costs no accuracy at all here; the ids still show it.)
- SCORE_BAND (0.02): the router's accuracy on your ids may fall at most 0.02 below its accuracy
  on the training code's ids of the same tickets (100% on every run of these seeds). Right
  encoders give the very same ids, so the same accuracy; the start token doubled or the
  lower-casing skipped (or only first letters lower-cased, on tickets typed in capitals) leave
  18-29%.

The drill's signature (PipelineSignature) is filled from one hidden run (the last whose ids
differ, else the first), every number measured here: the accuracies and losses of the judge's
router on your ids, on the training code's ids of the same tickets, on its training tickets
(train_loss is its loss at the end, not a mean over steps) and on held-out ones; the share of
tickets whose ids differ, the change in length and the <unk> shares. The fields of a training
curve (initial_train_loss, steps_run) stay None.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from drills.catalog.eval_pipeline_mismatch.exercises.same_encoding.problem import (
    Problem,
    build,
    padded,
    training_ids,
)
from drills.catalog.eval_pipeline_mismatch.problem import TEAMS
from drills.catalog.eval_pipeline_mismatch.signature import PipelineSignature
from drills.catalog.eval_pipeline_mismatch.train import PipelineConfig, TicketRouter, score
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    result,
    weights_check,
)

SCORE_BAND = 0.02
CONFIG = PipelineConfig()  # the drill's router, rate, weight decay and steps


def teams(tickets: Sequence[object]) -> torch.Tensor:
    return torch.tensor([ticket.team for ticket in tickets])  # type: ignore[attr-defined]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    """The layout the encoded tickets come back in: the training code's ids, padded."""
    problem = build(case, seed)
    return {"ids": padded(problem.tokenizer, training_ids(problem, problem.evaluation))}


@functools.cache
def trained_router(case: int, seed: int) -> TicketRouter:
    """The drill's router trained on the training code's encoding of the hidden run's training
    tickets (full-batch AdamW, as the drill trains it)."""
    problem = build(case, seed)
    torch.manual_seed(seed)
    model = TicketRouter(len(problem.tokenizer.vocabulary), CONFIG.embedding, CONFIG.hidden)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=CONFIG.lr, weight_decay=CONFIG.weight_decay
    )
    ids = padded(problem.tokenizer, training_ids(problem, problem.train))
    labels = teams(problem.train)
    for _ in range(CONFIG.steps):
        loss = F.cross_entropy(model(ids), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    return model


def decoded(problem: Problem, row: torch.Tensor) -> str:
    return problem.tokenizer.decode(row.tolist())


def ids_finding(case: CaseEvidence, problem: Problem, yours: torch.Tensor) -> str | None:
    """Which tickets got other ids than the training code gives them, shown on the first."""
    reference = padded(problem.tokenizer, training_ids(problem, problem.evaluation))
    differ = (yours != reference).any(dim=1)
    if not bool(differ.any()):
        return None
    first = int(differ.nonzero()[0])
    return (
        f"in {case.label}, {float(differ.float().mean()):.0%} of the evaluation tickets get "
        f"other token ids than the training code gives them; decoded, one reads "
        f'"{decoded(problem, yours[first])}" where training reads '
        f'"{decoded(problem, reference[first])}"'
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "encoded", what="encoded evaluation tickets")]
    measurements: dict[str, float | int | bool | str | None] = {}
    findings: list[str] = []
    scores: list[str] = []
    signature = None
    for case in cases:
        if case.weights is None:
            continue
        problem = build(case.case, case.seed)
        yours, reference = case.weights["ids"], case.initial["ids"]
        found = ids_finding(case, problem, yours)
        if found:
            findings.append(found)
        model, labels = trained_router(case.case, case.seed), teams(problem.evaluation)
        _, accuracy = score(model, (yours, labels))
        _, expected = score(model, (reference, labels))
        measurements[f"accuracy on your ids ({case.label})"] = accuracy
        measurements[f"accuracy on the training code's ids ({case.label})"] = expected
        if accuracy < expected - SCORE_BAND:
            scores.append(
                f"In {case.label}, the router gets {accuracy:.0%} of the tickets right as your "
                f"code encodes them, and {expected:.0%} of the very same tickets encoded the "
                f"training way (guessing among {TEAMS} teams gets {1 / TEAMS:.0%})."
            )
        if signature is None or found:
            signature = signature_of(problem, case, model, yours)
    missing = [case for case in cases if case.weights is None]
    if missing:
        checks.append(missing_evidence(exercise, "same-ids", missing))
        checks.append(missing_evidence(exercise, "scores-like-training", missing))
    else:
        passed = "Every evaluation ticket of every hidden run gets the training code's ids."
        checks.append(findings_check(exercise, "same-ids", findings, passed))
        checks.append(score_check(exercise, scores))
    return Assessment(checks, measurements, signature)


def score_check(exercise: Exercise, scores: list[str]) -> CheckResult:
    if not scores:
        return result(
            exercise,
            "scores-like-training",
            "pass",
            "The router scores your encoded tickets as it scores them encoded the training way.",
        )
    return result(exercise, "scores-like-training", "fail", scores[0])


def signature_of(
    problem: Problem, case: CaseEvidence, model: TicketRouter, yours: torch.Tensor
) -> PipelineSignature:
    """The drill's signature of one hidden run, every number measured here."""
    reference = case.initial["ids"]
    pad, unknown = problem.tokenizer.ids["<pad>"], problem.tokenizer.ids["<unk>"]
    labels = teams(problem.evaluation)
    train_ids = padded(problem.tokenizer, training_ids(problem, problem.train))
    holdout_ids = padded(problem.tokenizer, training_ids(problem, problem.holdout))
    signature = PipelineSignature(
        train_examples=len(problem.train),
        eval_examples=len(problem.evaluation),
        chance_accuracy=1.0 / TEAMS,
        ids_differ_share=float((yours != reference).any(dim=1).float().mean()),
        length_change=float(((yours != pad).sum(1) - (reference != pad).sum(1)).float().mean()),
        unknown_share=float((yours == unknown).sum() / (yours != pad).sum()),
        reencoded_unknown_share=float((reference == unknown).sum() / (reference != pad).sum()),
    )
    signature.train_loss, signature.train_accuracy = score(model, (train_ids, teams(problem.train)))
    signature.eval_loss, signature.eval_accuracy = score(model, (yours, labels))
    signature.reencoded_loss, signature.reencoded_accuracy = score(model, (reference, labels))
    holdout = (holdout_ids, teams(problem.holdout))
    signature.holdout_loss, signature.holdout_accuracy = score(model, holdout)
    return signature
