"""A curve-diagnosis round's model answer and its automatic score.

The learner's diagnosis has the five parts a case asks for (drills.cases.scoring.Diagnosis):
a leading cause, up to two alternatives, the first test that would tell them apart, the fix they
expect and the evidence that would confirm it. Two parts are scored here, from facts: the leading
cause against the drill's own diagnose() of the run the learner saw, and the first test against
the stored experiment readings (drills/catalog/<drill>/cases/outcomes.json). The fix and the
confirming evidence are words: they are shown beside the model answer, and an instructor may
review them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from drills.cases.contract import CaseSet, Cause, Experiment, Fix
from drills.cases.evidence import cause_telltales
from drills.cases.outcomes import separates
from drills.cases.registry import all_case_sets
from drills.cases.scoring import Diagnosis
from drills.core.knobs import resolve_knobs
from drills.practice.rounds import RoundVariant

MAX_MODEL_ALTERNATIVES = 2


def case_set_of(variant: RoundVariant) -> CaseSet:
    for case_set in all_case_sets():
        if case_set.drill == variant.drill:
            return case_set
    raise KeyError(f"no case set stands on {variant.drill!r}")


def cause_of(variant: RoundVariant) -> Cause:
    return case_set_of(variant).cause(variant.key.split("/", 1)[1])


@dataclass(frozen=True)
class ModelAnswer:
    leading: Cause
    alternatives: tuple[Cause, ...]
    first_test: Experiment | None  # None when no experiment of the set separates them
    intervention: Fix
    # What a rerun with the fix should show: the drill's healthy outcome, in its own words.
    confirmation: str


def model_fix(variant: RoundVariant) -> Fix:
    """The fix that heals the variant's cause (each cause of a case set names its own)."""
    return case_set_of(variant).fix(cause_of(variant).fix)


@dataclass(frozen=True)
class FixedSetup:
    """The knobs of a round's run with its cause fixed, for the diff its answer shows."""

    knobs: dict[str, Any]
    # False when the variant's fix changes nothing of a run its cause planted something in: the
    # knobs the cause set are then put back to the drill's defaults instead.
    by_model_fix: bool


def fixed_setup(variant: RoundVariant, knobs: Mapping[str, Any]) -> FixedSetup:
    """`knobs` (the round's run, as stored) with the model fix applied; resolved first, since a
    stored run holds JSON lists where the drill's knobs and a fix's `replace` hold tuples."""
    drill = case_set_of(variant).drill_object
    ran = resolve_knobs(drill, knobs)
    fixed = resolve_knobs(drill, model_fix(variant).change.apply(ran))
    if fixed != ran or cause_of(variant).family == "healthy":
        return FixedSetup(fixed, by_model_fix=True)
    defaults = resolve_knobs(drill, {})
    planted = {name: defaults[name] for name in variant.knobs}
    return FixedSetup({**ran, **planted}, by_model_fix=False)


def model_answer(variant: RoundVariant) -> ModelAnswer:
    case_set = case_set_of(variant)
    cause = cause_of(variant)
    # The rivals worth naming: those the drill's diagnose() cannot tell from this cause first
    # (the same verdict), then the other failures, the healthy reading last.
    others = [item for item in case_set.causes if item.key != cause.key]
    others.sort(key=lambda item: (item.verdict != cause.verdict, item.family == "healthy"))
    alternatives = tuple(others[:MAX_MODEL_ALTERNATIVES])
    # The first experiment that tells the cause from both rivals; when none does, the closer
    # rival alone is named, with a test that tells them apart (a model answer scores in full).
    first_test = None
    for named in (alternatives, alternatives[:1]):
        rivals = [item.key for item in named]
        first_test = next(
            (e for e in case_set.experiments if separates(case_set, e.key, cause.key, rivals)),
            None,
        )
        if first_test is not None:
            alternatives = named
            break
    drill = case_set.drill_object
    healthy_text = next(
        (item.text for item in drill.hypotheses if item.key == drill.healthy),
        "the drill's healthy curves",
    )
    if cause.family == "healthy":
        confirmation = f"Nothing needs fixing: a run on another seed shows the same. {healthy_text}"
    else:
        confirmation = f"A rerun with the fix reads healthy: {healthy_text}"
    return ModelAnswer(cause, alternatives, first_test, model_fix(variant), confirmation)


@dataclass(frozen=True)
class RoundScore:
    # The leading cause's reading is what the drill's diagnose() read from the run shown.
    leading_right: bool
    cause_named: bool  # the leading cause is the very one planted (several may read alike)
    test_separates: bool  # the first test tells the leading cause from each alternative
    would_have: tuple[str, ...]  # when it does not: the experiments that would have

    @property
    def points(self) -> int:
        return int(self.leading_right) + int(self.test_separates)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"points": self.points}


MAX_POINTS = 2


def score_round(variant: RoundVariant, diagnosis: Diagnosis, observed: str) -> RoundScore:
    """Score a diagnosis against `observed`, the drill's diagnose() of the run the learner saw
    (not the verdict the variant usually reads: the run decides)."""
    case_set = case_set_of(variant)
    leading = case_set.cause(diagnosis.leading)
    test_separates = separates(
        case_set, diagnosis.first_test, diagnosis.leading, diagnosis.alternatives
    )
    would_have: tuple[str, ...] = ()
    if not test_separates:
        would_have = tuple(
            experiment.key
            for experiment in case_set.experiments
            if separates(case_set, experiment.key, diagnosis.leading, diagnosis.alternatives)
        )
    return RoundScore(
        leading_right=leading.verdict == observed,
        cause_named=leading.key == cause_of(variant).key,
        test_separates=test_separates,
        would_have=would_have,
    )


def telltales(variant: RoundVariant) -> set[str]:
    """Strings that would give a round away before its answer: the variant's key and those of
    its cause (drills.cases.evidence.cause_telltales)."""
    return {variant.key} | cause_telltales(case_set_of(variant), cause_of(variant))
