"""Scoring a case attempt: pure, from what the learner recorded and what the runs showed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from drills.cases.contract import Case
from drills.cases.outcomes import separates


@dataclass(frozen=True)
class Diagnosis:
    """What the learner commits to before any experiment (the packet's verbal diagnosis)."""

    leading: str  # a cause key of the case set
    alternatives: tuple[str, ...]  # up to two other cause keys
    first_test: str  # an experiment key: the test that would separate them
    intervention: str  # free text: what they expect to fix it
    confirmation: str  # free text: the evidence that would confirm the fix worked


@dataclass(frozen=True)
class ExperimentScore:
    key: str
    separated: bool  # told the leading hypothesis from every alternative
    # When it did not: the experiments of the case that would have.
    would_have: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseScore:
    cause_named: bool
    # The intended fix was chosen and its run came back healthy: a change that merely leaves a
    # run healthy (anything, on a case where nothing is broken) verifies nothing.
    fix_verified: bool
    experiments_used: int
    budget: int
    leading_right: bool  # before any experiment
    experiments: tuple[ExperimentScore, ...] = field(default_factory=tuple)
    # Whether the chosen fix's run came back healthy at all (a harmless change on a healthy
    # draw does): the page must not say "did not produce a healthy run" of a healthy run.
    fix_healed: bool = False
    # A code verdict: the exercise whose loop the learner fixed instead of picking a fix, and
    # whether it is the drawn cause's own (code that passes another exercise's judge fixes a
    # different bug, and earns no fix point).
    exercise: str | None = None
    exercise_fits: bool = False

    @property
    def points(self) -> int:
        """A summary out of 4: cause, verified fix, leading hypothesis, and every experiment
        spent on a test that separated (no experiment spent also counts: nothing wasted)."""
        discriminating = all(item.separated for item in self.experiments)
        return sum((self.cause_named, self.fix_verified, self.leading_right, discriminating))

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["points"] = self.points
        return data


def score_experiment(case: Case, diagnosis: Diagnosis, experiment: str) -> ExperimentScore:
    case_set = case.case_set
    if separates(case_set, experiment, diagnosis.leading, diagnosis.alternatives):
        return ExperimentScore(experiment, True)
    better = tuple(
        candidate.key
        for candidate in case_set.experiments
        if separates(case_set, candidate.key, diagnosis.leading, diagnosis.alternatives)
    )
    return ExperimentScore(experiment, False, better)


def score_case(
    case: Case,
    cause: str,
    diagnosis: Diagnosis,
    experiments: Sequence[str],
    named_cause: str,
    fix_healed: bool,
    budget: int,
    *,
    fix_key: str,
    exercise: str | None = None,
) -> CaseScore:
    """Score an attempt whose draw planted `cause` (one of the case's causes). With `exercise`
    the verdict was code: `fix_healed` then means the judge passed it, and the fix counts only
    if the named cause is the drawn one and the exercise is that cause's."""
    fits = exercise is not None and case.cause(cause).exercise == exercise
    if exercise is None:
        verified = fix_key == case.fix_of(cause) and fix_healed
    else:
        verified = fits and named_cause == cause and fix_healed
    return CaseScore(
        cause_named=named_cause == cause,
        fix_verified=verified,
        experiments_used=len(experiments),
        budget=budget,
        leading_right=diagnosis.leading == cause,
        experiments=tuple(score_experiment(case, diagnosis, key) for key in experiments),
        fix_healed=fix_healed,
        exercise=exercise,
        exercise_fits=fits,
    )
