"""Scoring a case attempt on hand-built examples, against a hand-built outcome table."""

from __future__ import annotations

import pytest

from drills.cases import outcomes
from drills.cases.registry import get_case
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
    case = get_case("frozen-features")  # backbone-not-optimized
    guess = diagnosis("backbone-not-optimized", "head-not-optimized")
    score = score_case(case, guess, ["update-sizes"], "backbone-not-optimized", True, 3)
    assert (score.cause_named, score.fix_verified, score.leading_right) == (True, True, True)
    assert score.experiments[0].separated
    assert score.points == 4


def test_a_test_that_cannot_separate_says_which_would_have() -> None:
    case = get_case("swapped-head")  # optimizer-holds-old-head
    guess = diagnosis("optimizer-holds-old-head", "head-not-optimized")
    score = score_case(case, guess, ["update-sizes"], "optimizer-holds-old-head", True, 3)
    assert not score.experiments[0].separated  # both read "head"
    # The inventory varies under the leading cause: only the health table separates.
    assert score.experiments[0].would_have == ("parameter-health",)
    assert score.points == 3


def test_wrong_leading_hypothesis_and_wrong_cause_cost_their_points() -> None:
    case = get_case("frozen-features")
    guess = diagnosis("head-not-optimized", "nothing-wrong")
    score = score_case(case, guess, [], "head-not-optimized", False, 3)
    assert not score.cause_named and not score.leading_right and not score.fix_verified
    assert score.experiments_used == 0
    assert score.points == 1  # no experiment was wasted


def test_no_alternatives_means_nothing_to_separate() -> None:
    case = get_case("frozen-features")
    score = score_case(
        case,
        diagnosis("backbone-not-optimized"),
        ["parameter-health"],
        "backbone-not-optimized",
        True,
        3,
    )
    assert not score.experiments[0].separated
