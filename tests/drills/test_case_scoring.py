"""Scoring a case attempt on hand-built examples, against a hand-built outcome table."""

from __future__ import annotations

import pytest

from drills.cases import outcomes
from drills.cases.registry import all_cases, get_case
from drills.cases.scoring import Diagnosis, score_case

TABLE = {
    "optimizer-membership": {
        "nothing-wrong": {
            "parameter-health": "a",
            "update-sizes": "all",
            "optimizer-inventory": "x",
        },
        "head-not-optimized": {
            "parameter-health": "b",
            "update-sizes": "head",
            "optimizer-inventory": "y",
        },
        "backbone-not-optimized": {
            "parameter-health": "c",
            "update-sizes": "bb",
            "optimizer-inventory": "y",
        },
        "optimizer-holds-old-head": {
            "parameter-health": "d",
            "update-sizes": "head",
            "optimizer-inventory": "varies",
        },
    }
}


@pytest.fixture(autouse=True)
def hand_built_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "stored_table", lambda: TABLE)


def diagnosis(leading: str, *alternatives: str) -> Diagnosis:
    return Diagnosis(leading, alternatives, "update-sizes", "rebuild it", "the head moves")


def test_a_solved_case_scores_every_point() -> None:
    case = get_case("a-fresh-head")
    cause = "backbone-not-optimized"
    guess = diagnosis(cause, "head-not-optimized")
    score = score_case(
        case, cause, guess, ["update-sizes"], cause, True, 3, fix_key=case.fix_of(cause)
    )
    assert (score.cause_named, score.fix_verified, score.leading_right) == (True, True, True)
    assert score.experiments[0].separated
    assert score.points == 4


def test_a_test_that_cannot_separate_says_which_would_have() -> None:
    case = get_case("a-suspicious-checkpoint")
    cause = "optimizer-holds-old-head"
    guess = diagnosis(cause, "head-not-optimized")
    score = score_case(
        case, cause, guess, ["update-sizes"], cause, True, 3, fix_key=case.fix_of(cause)
    )
    assert not score.experiments[0].separated  # both read "head"
    # The inventory varies under the leading cause: only the health table separates.
    assert score.experiments[0].would_have == ("parameter-health",)
    assert score.points == 3


def test_wrong_leading_hypothesis_and_wrong_cause_cost_their_points() -> None:
    case = get_case("a-fresh-head")
    cause = "backbone-not-optimized"
    guess = diagnosis("head-not-optimized", "nothing-wrong")
    score = score_case(
        case, cause, guess, [], "head-not-optimized", False, 3, fix_key=case.fix_of(cause)
    )
    assert not score.cause_named and not score.leading_right and not score.fix_verified
    assert score.experiments_used == 0
    assert score.points == 1  # no experiment was wasted


def test_no_alternatives_means_nothing_to_separate() -> None:
    case = get_case("a-fresh-head")
    score = score_case(
        case,
        "backbone-not-optimized",
        diagnosis("backbone-not-optimized"),
        ["parameter-health"],
        "backbone-not-optimized",
        True,
        3,
        fix_key="optimize-all-parameters",
    )
    assert not score.experiments[0].separated


def test_a_harmless_change_on_a_healthy_case_verifies_no_fix() -> None:
    """Where nothing is broken almost any change leaves the run healthy: only the intended
    fix (change nothing) earns the point, and a wrong fix whose run healed earns nothing."""
    healthy = next(case for case in all_cases() if "healthy" in case.families())
    cause = next(key for key in healthy.causes if healthy.cause(key).family == "healthy")
    guess = diagnosis(cause)
    harmless = next(fix.key for fix in healthy.case_set.fixes if fix.key != "change-nothing")
    wrong = score_case(healthy, cause, guess, [], cause, True, 3, fix_key=harmless)
    right = score_case(healthy, cause, guess, [], cause, True, 3, fix_key="change-nothing")
    assert (wrong.fix_verified, right.fix_verified) == (False, True)
    assert wrong.fix_healed  # and the page can say so, rather than "did not produce a healthy run"
    assert right.points - wrong.points == 1
