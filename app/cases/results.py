"""A cohort's case results for its instructor: each learner's latest result per case (the
offered ones, and a retired one someone tried), and per case the wrong causes named most often
(the cohort's misconceptions)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.cases.models import CaseAttempt, CaseStage
from drills.cases.registry import all_cases, retired_cases


@dataclass(frozen=True)
class Misconception:
    cause: str  # the cause's text
    learners: int  # how many named it


def cohort_case_results(session: Session, learners: list[User]) -> dict[str, Any]:
    ids = [learner.id for learner in learners if learner.id is not None]
    rows = session.exec(
        select(CaseAttempt)
        .where(col(CaseAttempt.learner_id).in_(ids))
        .order_by(col(CaseAttempt.number))
    ).all()
    latest: dict[tuple[int, str], CaseAttempt] = {}
    wrong: dict[str, Counter[str]] = {}
    for row in rows:
        latest[(row.learner_id, row.case_key)] = row  # ascending numbers: the last one wins
        score = row.score or {}
        if row.stage == CaseStage.revealed and not score.get("cause_named") and row.named_cause:
            wrong.setdefault(row.case_key, Counter())[row.named_cause] += 1
    # A retired case keeps its column while someone in the cohort has an attempt at it.
    tried = {row.case_key for row in rows}
    cases = [*all_cases(), *(case for case in retired_cases() if case.key in tried)]
    misconceptions: dict[str, list[Misconception]] = {}
    for case in cases:
        texts = {cause.key: cause.text for cause in case.case_set.causes}
        counted = wrong.get(case.key, Counter())
        misconceptions[case.key] = [
            Misconception(texts.get(key, key), count) for key, count in counted.most_common(3)
        ]
    return {
        "cases": cases,
        "cells": {key: cell(row) for key, row in latest.items()},
        "misconceptions": misconceptions,
    }


def cell(row: CaseAttempt) -> dict[str, Any]:
    """One grid cell: the state in a word, the score, and the attempt it summarises."""
    score = row.score or {}
    if row.stage != CaseStage.revealed:
        state = "open"
    else:
        state = "solved" if score.get("cause_named") else "missed"
    return {"state": state, "points": score.get("points"), "id": row.id, "number": row.number}
