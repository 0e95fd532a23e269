"""The instructor's pages (issue 12, item 9): rubric levels say what they mean, cohort-grid cells
lead to the work they summarise, and after a decision the next item in the queue is one click."""

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from app.accounts.models import Role
from app.cases.models import CASE_RUBRIC, CASE_RUBRIC_LEVELS, CaseReview
from app.core.config import Settings
from app.grading.models import RUBRIC, RUBRIC_LEVELS
from app.main import create_app
from tests.app.factories import (
    _save,
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_review,
    add_submission,
    add_user,
    signed_in,
)

ACCEPT_ALL = {f"score.{key}": "2" for key, _label in RUBRIC} | {"decision": "accepted"}
ACCEPT_CASE = {f"score.{key}": "2" for key, _label in CASE_RUBRIC} | {"decision": "accepted"}


@pytest.fixture
def cohort(make_settings: Callable[..., Settings]) -> Any:
    """An instructor's cohort of three learners: ann and bob, who ran and submitted, and cy, who
    has not started."""
    app = create_app(make_settings())
    with TestClient(app):
        engine = app.state.engine
        teacher = add_user(engine, "ida", Role.instructor)
        learners = {name: add_user(engine, name) for name in ("ann", "bob", "cy")}
        cohort_id = add_cohort(
            engine, teacher, name="Autumn", code="ABCDEFGH", learners=learners.values()
        )
        yield {
            "app": app,
            "engine": engine,
            "teacher": teacher,
            "learners": learners,
            "cohort": cohort_id,
            "instructor": signed_in(app, "ida"),
        }


def submitted(world: Any, name: str) -> int:
    engine, learner = world["engine"], world["learners"][name]
    failed = add_attempt(engine, learner, fixed=False)
    fixed = add_attempt(engine, learner, fixed=True)
    return add_submission(engine, learner, failed, fixed)


def test_every_criterion_has_one_line_per_level() -> None:
    for rubric, levels in ((RUBRIC, RUBRIC_LEVELS), (CASE_RUBRIC, CASE_RUBRIC_LEVELS)):
        assert [key for key, _label in rubric] == list(levels)
        for lines in levels.values():
            assert len(lines) == 3 and all(line and "\n" not in line for line in lines)
    # One lookup serves both rubrics in the templates: their keys must not collide.
    assert not set(RUBRIC_LEVELS) & set(CASE_RUBRIC_LEVELS)


def test_the_review_form_and_the_scores_given_show_what_each_level_means(cohort: Any) -> None:
    submission = submitted(cohort, "ann")
    form = cohort["instructor"].get(f"/submissions/{submission}").text
    for key, _label in RUBRIC:
        for line in RUBRIC_LEVELS[key]:
            assert escape(line) in form
    add_review(
        cohort["engine"], submission, cohort["teacher"], comment="ok", decision="accepted"
    )  # every criterion scored 1
    learner = signed_in(cohort["app"], "ann")
    for page in (f"/submissions/{submission}", "/drills/overfit-one-batch"):
        text = learner.get(page).text
        for key, _label in RUBRIC:
            assert (
                f'<strong>1/2</strong> <span class="level">({escape(RUBRIC_LEVELS[key][1])})'
                in text
            )
            assert escape(RUBRIC_LEVELS[key][2]) not in text


def test_a_case_review_shows_what_each_level_means(cohort: Any) -> None:
    case_attempt, _run = add_case_attempt(cohort["engine"], cohort["learners"]["bob"])
    page = cohort["instructor"].get(f"/cases/attempts/{case_attempt}").text
    assert all(escape(line) in page for lines in CASE_RUBRIC_LEVELS.values() for line in lines)
    scores = {key: {"score": 0, "comment": ""} for key, _label in CASE_RUBRIC}
    _save(
        cohort["engine"],
        CaseReview(
            case_attempt_id=case_attempt,
            instructor_id=cohort["teacher"],
            decision="accepted",
            scores=scores,
        ),
    )
    learner = signed_in(cohort["app"], "bob")
    shown = learner.get(f"/cases/attempts/{case_attempt}").text
    for key, _label in CASE_RUBRIC:
        assert escape(CASE_RUBRIC_LEVELS[key][0]) in shown


def test_grid_cells_link_to_the_work_they_summarise(cohort: Any) -> None:
    engine, learners, instructor = cohort["engine"], cohort["learners"], cohort["instructor"]
    submission = submitted(cohort, "ann")
    add_attempt(engine, learners["bob"], fixed=False)
    newest = add_attempt(engine, learners["bob"], fixed=True)
    case_attempt, _run = add_case_attempt(engine, learners["bob"])
    page = instructor.get(f"/cohorts/{cohort['cohort']}").text
    start = page.index('id="cohort-grid"')  # after the summary's table (app/assignments)
    grid = page[start : page.index("</table>", start)]
    rows = {name: row for name in learners for row in grid.split("<tr>") if f">{name}<" in row}
    assert f'<a href="/submissions/{submission}">pending review</a>' in rows["ann"]
    assert f'<a href="/attempts/{newest}">attempted</a>' in rows["bob"]  # the newest attempt
    assert "<a " not in rows["cy"]
    assert f'href="/cases/attempts/{case_attempt}"' in page
    links = set(re.findall(r'href="(/(?:submissions|attempts|cases/attempts)/\d+)"', page))
    assert links == {
        f"/submissions/{submission}",
        f"/attempts/{newest}",
        f"/cases/attempts/{case_attempt}",
    }
    for link in links:
        assert instructor.get(link).status_code == 200, link


def test_after_a_decision_the_next_link_is_the_oldest_item_left(cohort: Any) -> None:
    instructor = cohort["instructor"]
    oldest = submitted(cohort, "ann")
    newer = submitted(cohort, "bob")
    case_attempt, _run = add_case_attempt(cohort["engine"], cohort["learners"]["cy"])

    decided = instructor.post(f"/submissions/{newer}/reviews", data=ACCEPT_ALL)
    assert decided.history[0].headers["location"] == f"/submissions/{newer}#next-in-queue"
    assert next_link(decided.text) == f"/submissions/{oldest}#review"

    decided = instructor.post(f"/submissions/{oldest}/reviews", data=ACCEPT_ALL)
    assert next_link(decided.text) == f"/cases/attempts/{case_attempt}#case-review"

    decided = instructor.post(f"/cases/attempts/{case_attempt}/review", data=ACCEPT_CASE)
    assert decided.status_code == 200 and 'id="next-in-queue"' in decided.text
    assert next_link(decided.text) is None
    assert "Nothing else waits for your review" in decided.text


def test_no_next_link_before_the_decision_or_for_the_learner(cohort: Any) -> None:
    submission = submitted(cohort, "ann")
    assert 'id="next-in-queue"' not in cohort["instructor"].get(f"/submissions/{submission}").text
    add_review(cohort["engine"], submission, cohort["teacher"], comment="ok", decision="accepted")
    learner = signed_in(cohort["app"], "ann")
    assert 'id="next-in-queue"' not in learner.get(f"/submissions/{submission}").text


def next_link(page: str) -> str | None:
    match = re.search(r'id="next-in-queue-link" href="([^"]+)"', page)
    return match.group(1) if match else None
