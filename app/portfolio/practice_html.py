"""The diagnosing work on the portfolio's HTML page: revealed cases, answered curve rounds and
spaced reviews, read from the same records as their statements (practice_statements.py).

Each row carries its statement's id and digest, so a reader can tie it to the signed JSON. The
records hold only revealed cases and answered rounds (an open one's draw names what it hides),
so nothing here can show more of unfinished work than the JSON does.
"""

from collections import Counter
from datetime import date, timedelta
from typing import Any

from app.cases.models import CaseAttempt
from app.portfolio.practice_statements import (
    case_attempt_id,
    review_item_name,
    round_id,
    spaced_review_id,
)
from app.portfolio.records import LearnerRecords
from app.practice.models import ReviewLogEntry, ReviewRating
from app.practice.round_models import DiagnosisRound
from drills.cases.contract import CaseSet
from drills.cases.registry import UnknownCase, get_case
from drills.core.registry import UnknownDrill, get_drill
from drills.practice.round_answers import MAX_POINTS as ROUND_POINTS
from drills.practice.round_answers import case_set_of, cause_of
from drills.practice.rounds import get_variant

CASE_POINTS = 4  # drills.cases.scoring.CaseScore.points: cause, fix, leading, experiments


def practice_sections(mine: LearnerRecords, digests: dict[str, str]) -> dict[str, Any]:
    return {
        "cases": [_case(case_attempt, digests) for case_attempt in mine.case_attempts],
        "rounds": [_round(diagnosis_round, digests) for diagnosis_round in mine.rounds],
        "reviews": [_review(entry, digests) for entry in mine.review_log],
        "review_weeks": review_weeks(mine.review_log),
        "ratings": [rating.value for rating in ReviewRating],
    }


def review_weeks(entries: list[ReviewLogEntry]) -> list[dict[str, Any]]:
    """Reviews per week (weeks start on Monday, UTC), counted by rating, oldest week first."""
    weeks: dict[date, Counter[str]] = {}
    for entry in entries:
        day = entry.reviewed_at.date()
        weeks.setdefault(day - timedelta(days=day.weekday()), Counter())[entry.rating] += 1
    return [
        {
            "week": week,
            "total": sum(counts.values()),
            "ratings": [counts[rating] for rating in ReviewRating],
        }
        for week, counts in sorted(weeks.items())
    ]


def _case(case_attempt: CaseAttempt, digests: dict[str, str]) -> dict[str, Any]:
    assert case_attempt.id is not None
    score = case_attempt.score or {}
    try:
        case = get_case(case_attempt.case_key)
        title, case_set = case.title, case.case_set
    except UnknownCase:  # a case since removed from the pool: its record still stands
        title, case_set = case_attempt.case_key, None
    named = case_attempt.named_cause or ""
    fix = case_attempt.fix_key or ""
    statement = case_attempt_id(case_attempt.id)
    return {
        "case_attempt": case_attempt,
        "title": title,
        "named_cause": _cause_text(case_set, named),
        "cause_right": bool(score.get("cause_named")),
        "fix": _fix_text(case_set, fix),
        # A verified fix healed; older scores carry only the verification.
        "fix_healed": bool(score.get("fix_healed") or score.get("fix_verified")),
        "fix_verified": bool(score.get("fix_verified")),
        "experiments_used": score.get("experiments_used", len(score.get("experiments", []))),
        "budget": score.get("budget", case_attempt.budget),
        "points": score.get("points"),
        "max_points": CASE_POINTS,
        "diagnosis": diagnosis_parts(case_set, case_attempt.diagnosis or {}),
        "statement_id": statement,
        "statement_digest": digests.get(statement),
    }


def _round(diagnosis_round: DiagnosisRound, digests: dict[str, str]) -> dict[str, Any]:
    assert diagnosis_round.id is not None
    score = diagnosis_round.score or {}
    diagnosis = diagnosis_round.diagnosis or {}
    case_set: CaseSet | None
    try:
        variant = get_variant(diagnosis_round.variant_key)
        case_set, cause = case_set_of(variant), cause_of(variant).text
    except KeyError:  # a variant since retired: its record still stands
        case_set, cause = None, diagnosis_round.variant_key
    statement = round_id(diagnosis_round.id)
    return {
        "round": diagnosis_round,
        # Answered rounds only reach the records, so the planted cause is no longer hidden.
        "title": f"{_drill_title(diagnosis_round.drill_slug)}: {cause}",
        "leading": _cause_text(case_set, diagnosis.get("leading", "")),
        "leading_right": bool(score.get("leading_right")),
        "points": score.get("points"),
        "max_points": ROUND_POINTS,
        # Its leading hypothesis heads the round already: the other four parts.
        "diagnosis": diagnosis_parts(case_set, diagnosis)[1:],
        "statement_id": statement,
        "statement_digest": digests.get(statement),
    }


def _review(entry: ReviewLogEntry, digests: dict[str, str]) -> dict[str, Any]:
    assert entry.id is not None
    statement = spaced_review_id(entry.id)
    return {
        "entry": entry,
        "item": review_item_name(entry.item_key),
        "statement_id": statement,
        "statement_digest": digests.get(statement),
    }


def diagnosis_parts(case_set: CaseSet | None, diagnosis: dict[str, Any]) -> list[tuple[str, str]]:
    """The five parts of a stored diagnosis in words: causes and the test by their text, the
    fix and the evidence as the learner wrote them."""
    if not diagnosis:
        return []
    alternatives = [_cause_text(case_set, key) for key in diagnosis.get("alternatives", [])]
    return [
        ("Leading hypothesis", _cause_text(case_set, diagnosis.get("leading", ""))),
        ("Alternatives", "; ".join(alternatives) or "none"),
        ("First test", _experiment_title(case_set, diagnosis.get("first_test", ""))),
        ("Expected fix", str(diagnosis.get("intervention", ""))),
        ("Evidence the fix worked", str(diagnosis.get("confirmation", ""))),
    ]


# Each lookup falls back to the stored key: a cause, fix or test retired since still reads.
def _cause_text(case_set: CaseSet | None, key: str) -> str:
    texts = {cause.key: cause.text for cause in case_set.causes} if case_set else {}
    return texts.get(key, key)


def _fix_text(case_set: CaseSet | None, key: str) -> str:
    texts = {fix.key: fix.text for fix in case_set.fixes} if case_set else {}
    return texts.get(key, key)


def _experiment_title(case_set: CaseSet | None, key: str) -> str:
    titles = {item.key: item.title for item in case_set.experiments} if case_set else {}
    return titles.get(key, key)


def _drill_title(slug: str) -> str:
    try:
        return get_drill(slug).title
    except UnknownDrill:  # retired since: the record still stands
        return slug
