"""The gradebook CSV (issue 30, instructor tooling): a row per learner with every rubric score an
instructor gave, every case's and round's points, every exercise's result and every assignment's
standing; it parses back with csv and no cell reads as a formula."""

import csv
import io
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.accounts.models import Role
from app.cases.models import CaseReview
from app.core.config import Settings
from app.grading.models import Review
from app.main import create_app
from app.models.time import utcnow
from app.practice.round_models import RoundReview
from tests.app.factories import (
    DRILL,
    EXERCISE,
    add_assignment,
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_exercise_run,
    add_round,
    add_submission,
    add_user,
    signed_in,
)

CASE = "a-fresh-head"
DRILL_SCORES = {"mechanism": 2, "when_to_use": 1, "honest_prediction": 0, "connects": 2}
CASE_SCORES = {"alternatives": 2, "test_choice": 1, "verification": 0}
ROUND_SCORES = {"alternatives": 0, "test_choice": 2, "verification": 1}


def scored(scores: dict[str, int]) -> dict[str, Any]:
    return {key: {"score": value, "comment": ""} for key, value in scores.items()}


def save(engine: Engine, row: Any) -> None:
    with Session(engine) as session:
        session.add(row)
        session.commit()


@pytest.fixture
def gradebook(make_settings: Callable[..., Settings]) -> Iterator[dict[str, Any]]:
    """Ida's cohort: ann did everything and had it reviewed; bob failed the exercise and left
    the case open; cy, whose display name reads as a formula, did nothing. Two assignments: the
    case, due yesterday, and one curve round, due next week."""
    app = create_app(make_settings())
    with TestClient(app):
        engine = app.state.engine
        ida = add_user(engine, "ida", Role.instructor)
        ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
        cy = add_user(engine, "cy", display_name="=HYPERLINK(1)")
        cohort = add_cohort(engine, ida, name="Autumn", code="AUTUMN22", learners=[ann, bob, cy])
        failed, fixed = add_attempt(engine, ann, fixed=False), add_attempt(engine, ann, fixed=True)
        submission = add_submission(engine, ann, failed, fixed)
        save(engine, Review(submission_id=submission, instructor_id=ida, decision="accepted",
                            scores=scored(DRILL_SCORES)))  # fmt: skip
        case_attempt, _ = add_case_attempt(engine, ann)
        save(engine, CaseReview(case_attempt_id=case_attempt, instructor_id=ida,
                                decision="accepted", scores=scored(CASE_SCORES)))  # fmt: skip
        diagnosis_round = add_round(engine, ann)
        save(engine, RoundReview(round_id=diagnosis_round, instructor_id=ida,
                                 decision="accepted", scores=scored(ROUND_SCORES)))  # fmt: skip
        add_exercise_run(engine, ann, judgement="passed")
        add_exercise_run(engine, bob, judgement="failed")
        add_case_attempt(engine, bob, stage="diagnosing")  # type: ignore[arg-type]
        yesterday = utcnow() - timedelta(days=1)
        add_assignment(engine, cohort, ida, title="Past", due_at=yesterday)
        add_assignment(engine, cohort, ida, title="Next", items=(("rounds", "1"),))
        client = signed_in(app, "ida")
        response = client.get(f"/cohorts/{cohort}/gradebook.csv")
        yield {"response": response, "due": yesterday}
        client.close()


def test_the_gradebook_parses_back_with_every_score(gradebook: dict[str, Any]) -> None:
    response = gradebook["response"]
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "gradebook.csv" in response.headers["content-disposition"]
    rows = {row["username"]: row for row in csv.DictReader(io.StringIO(response.text))}
    assert list(rows) == ["ann", "bob", "cy"]
    ann, bob, cy = rows["ann"], rows["bob"], rows["cy"]
    for criterion, score in DRILL_SCORES.items():
        assert ann[f"drill {DRILL}: review {criterion}"] == str(score)
    assert ann[f"drill {DRILL}: review decision"] == "accepted"
    assert (ann[f"case {CASE}: state"], ann[f"case {CASE}: points of 4"]) == ("solved", "4")
    for criterion, score in CASE_SCORES.items():
        assert ann[f"case {CASE}: review {criterion}"] == str(score)
    assert ann["round 1: points of 2"] == "2"
    for criterion, score in ROUND_SCORES.items():
        assert ann[f"round 1: review {criterion}"] == str(score)
    assert ann[f"exercise {EXERCISE}: result"] == "passed"
    assert bob[f"exercise {EXERCISE}: result"] == "failed"
    assert (bob[f"case {CASE}: state"], bob[f"case {CASE}: points of 4"]) == ("open", "")
    assert cy[f"exercise {EXERCISE}: result"] == ""
    # Every number the database holds for ann is in her row, and none that it does not.
    numbers = sorted(value for value in ann.values() if value.isdigit())
    stored = [*DRILL_SCORES.values(), 4, *CASE_SCORES.values(), 2, *ROUND_SCORES.values()]
    assert numbers == sorted(str(value) for value in stored)


def test_each_assignment_is_done_late_missing_or_not_due_yet(gradebook: dict[str, Any]) -> None:
    reader = csv.reader(io.StringIO(gradebook["response"].text))
    header = next(reader)
    past = f"assignment: Past (due {gradebook['due']:%Y-%m-%d %H:%M} UTC)"
    assert header[-2] == past and header[-1].startswith("assignment: Next (due ")
    standing = {row[0]: row[-2:] for row in reader}
    # Ann solved the case today, after yesterday's due date: late, not refused.
    assert standing == {
        "ann": ["late", "done"],
        "bob": ["missing", "not due yet"],
        "cy": ["missing", "not due yet"],
    }


def test_no_cell_reads_as_a_formula(gradebook: dict[str, Any]) -> None:
    rows = list(csv.reader(io.StringIO(gradebook["response"].text)))
    assert rows[3][:2] == ["cy", "'=HYPERLINK(1)"]
    assert not [cell for row in rows for cell in row if cell[:1] in ("=", "+", "-", "@")]
