"""A round's model answer and score: every variant has a full model answer whose first test
really tells its cause from the rivals it names (by the stored readings of real runs), its fix
is the one the case pool uses where a case plants the same cause, and the score follows the run's
own reading, not the variant's label."""

from __future__ import annotations

import json

import pytest

from drills.cases.contract import NO_CHANGE, Fix
from drills.cases.outcomes import separates
from drills.cases.registry import all_cases
from drills.cases.scoring import Diagnosis
from drills.practice import round_answers
from drills.practice.round_answers import (
    case_set_of,
    cause_of,
    fixed_setup,
    model_answer,
    model_fix,
    score_round,
    telltales,
)
from drills.practice.rounds import RoundVariant, all_variants, get_variant

VARIANTS = all_variants()


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.key)
def test_every_variant_has_a_model_answer_that_holds(variant: RoundVariant) -> None:
    model = model_answer(variant)
    case_set = case_set_of(variant)
    assert model.leading.key == variant.key.split("/", 1)[1]
    assert model.leading.verdict == variant.diagnosis
    assert 1 <= len(model.alternatives) <= 2
    assert model.leading not in model.alternatives
    assert model.first_test is not None
    # The model answer scores in full against a run that reads as the variant usually does.
    rivals = tuple(item.key for item in model.alternatives)
    diagnosis = Diagnosis(model.leading.key, rivals, model.first_test.key, "fix", "evidence")
    assert score_round(variant, diagnosis, observed=variant.diagnosis).points == 2
    assert separates(case_set, model.first_test.key, model.leading.key, rivals)
    assert model.intervention in case_set.fixes
    if model.leading.family == "healthy":
        assert model.intervention.key == "change-nothing"
    else:
        assert model.intervention.key != "change-nothing"
    assert model.confirmation


def test_every_cause_gets_the_fix_its_case_set_names_and_it_undoes_the_cause() -> None:
    for case in all_cases():
        for key in case.causes:
            variant = get_variant(f"{case.case_set.drill}/{key}")
            assert model_fix(variant).key == case.fix_of(key), variant.key


def diagnosis_for(variant: RoundVariant, leading: str, first_test: str) -> Diagnosis:
    rivals = [cause.key for cause in case_set_of(variant).causes if cause.key != leading]
    return Diagnosis(leading, (rivals[0],), first_test, "fix", "evidence")


def test_the_score_follows_the_runs_own_reading() -> None:
    variant = get_variant("optimizer-membership/backbone-not-optimized")
    model = model_answer(variant)
    assert model.first_test is not None
    right = diagnosis_for(variant, "backbone-not-optimized", model.first_test.key)
    score = score_round(variant, right, observed="backbone-left-out")
    assert score.leading_right and score.cause_named
    # A run that read otherwise (say the nuisance draw made it look healthy) scores by the run.
    assert not score_round(variant, right, observed="all-optimized").leading_right
    # Another cause with the same reading scores as right, but is not the one planted.
    case_set = case_set_of(variant)
    twins = [
        cause
        for cause in case_set.causes
        if cause.verdict == cause_of(variant).verdict and cause.key != cause_of(variant).key
    ]
    for twin in twins:
        twin_score = score_round(
            variant, diagnosis_for(variant, twin.key, model.first_test.key), observed=twin.verdict
        )
        assert twin_score.leading_right and not twin_score.cause_named


def test_a_first_test_that_separates_nothing_names_those_that_would() -> None:
    variant = get_variant("optimizer-membership/backbone-not-optimized")
    case_set = case_set_of(variant)
    for experiment in case_set.experiments:
        diagnosis = diagnosis_for(variant, "backbone-not-optimized", experiment.key)
        score = score_round(variant, diagnosis, observed="backbone-left-out")
        expected = separates(case_set, experiment.key, diagnosis.leading, diagnosis.alternatives)
        assert score.test_separates is expected
        assert (score.would_have == ()) is expected
        assert score.points == 1 + int(expected)
        for better in score.would_have:
            assert separates(case_set, better, diagnosis.leading, diagnosis.alternatives)


def test_telltales_name_the_variant_the_drill_and_the_planted_values() -> None:
    variant = get_variant("optimizer-membership/backbone-not-optimized")
    found = telltales(variant)
    assert {variant.key, "backbone-not-optimized", "optimizer-membership"} <= found
    assert "exclude=backbone" in found


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.key)
def test_every_variant_is_fixed_by_its_model_fix(variant: RoundVariant) -> None:
    """The knobs a round's answer diffs against: the model fix applied to the run's knobs (read
    back as JSON stores them), which undoes what the cause planted unless nothing was."""
    knobs = {**variant.base, **variant.knobs}
    fixed = fixed_setup(variant, json.loads(json.dumps(knobs)))
    assert fixed.by_model_fix
    changed = {
        name for name in fixed.knobs if fixed.knobs[name] != knobs.get(name, fixed.knobs[name])
    }
    if variant.family == "healthy":
        assert not changed
    else:
        assert changed, variant.key


def test_a_variant_whose_fix_changes_nothing_is_diffed_against_the_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variant = get_variant("overfit-one-batch/labels-reshuffled")
    monkeypatch.setattr(round_answers, "model_fix", lambda _: Fix("none", "Nothing.", NO_CHANGE))
    fixed = fixed_setup(variant, {**variant.base, **variant.knobs, "lr": 0.5})
    assert not fixed.by_model_fix
    assert fixed.knobs["bug"] == "none"  # the planted knob, at the drill's default
    assert fixed.knobs["lr"] == 0.5  # the rest of the run as it was
