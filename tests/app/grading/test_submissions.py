"""Submitting evidence and reviewing it: the rules, the queue, the history, the progress views."""

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, func, select

from app.accounts.models import Cohort, CohortMembership, Role
from app.core.config import Settings
from app.grading.models import Review, Submission
from app.main import create_app
from app.runs.models import Attempt
from tests.app.factories import (
    add_attempt,
    add_cohort,
    add_explanation,
    add_submission,
    engine_of,
)
from tests.conftest import log_in, make_user

TEXTS = {
    "mechanism": "The labels *move* between examples.",
    "right_tool": "Before a long run.",
    "wrong_tool": "To judge generalisation.",
    "next_check": "Print input/label pairs.",
}
RUBRIC_ALL = {
    f"score.{key}": "2" for key in ("mechanism", "when_to_use", "honest_prediction", "connects")
}


def make_attempt(engine: Engine, learner_id: int, *, status: str, observed: str | None) -> int:
    with Session(engine) as session:
        attempt = Attempt(
            learner_id=learner_id,
            drill_slug="overfit-one-batch",
            drill_version="1",
            hypothesis="fits",
            prediction_text="zero",
            knobs={"bug": "none"},
            seed=0,
            command="python -m drills run overfit-one-batch --seed 0",
            status=status,
            observed_hypothesis=observed,
            signature={"final_loss": 0.01},
        )
        session.add(attempt)
        session.commit()
        assert attempt.id is not None
        return attempt.id


@pytest.fixture
def classroom(make_settings: Callable[..., Settings]) -> Any:
    """An instructor with a cohort, a learner in it (logged in), and the learner's two runs."""
    app = create_app(make_settings())
    with TestClient(app) as learner:
        engine = app.state.engine
        teacher = make_user(engine, "ida", Role.instructor)
        student = make_user(engine, "lee")
        with Session(engine) as session:
            cohort = Cohort(name="Autumn", join_code="ABCDEFGH", instructor_id=teacher.saved_id)
            session.add(cohort)
            session.commit()
            assert cohort.id is not None  # saved above
            session.add(CohortMembership(cohort_id=cohort.id, learner_id=student.saved_id))
            session.commit()
            cohort_id = cohort.id
        log_in(learner, "lee")
        instructor = TestClient(app)
        log_in(instructor, "ida")
        runs = {
            "failed": make_attempt(
                engine, student.saved_id, status="succeeded", observed="labels-detached"
            ),
            "fixed": make_attempt(engine, student.saved_id, status="succeeded", observed="fits"),
            "crashed": make_attempt(engine, student.saved_id, status="failed", observed=None),
        }
        yield {
            "app": app,
            "learner": learner,
            "instructor": instructor,
            "runs": runs,
            "cohort": cohort_id,
        }


def submit(client: TestClient, failed: int, fixed: int, **texts: str) -> Any:
    data = {"failed_attempt_id": str(failed), "fixed_attempt_id": str(fixed), **TEXTS, **texts}
    return client.post("/drills/overfit-one-batch/submissions", data=data, follow_redirects=False)


def count(app: Any, model: Any) -> int:
    with Session(app.state.engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_a_submission_needs_a_failed_and_a_fixed_run_and_every_text(classroom: Any) -> None:
    learner, runs, app = classroom["learner"], classroom["runs"], classroom["app"]
    swapped = submit(learner, runs["fixed"], runs["failed"])
    assert swapped.status_code == 422 and "does not show the failure" in swapped.text
    crashed_as_fixed = submit(learner, runs["failed"], runs["crashed"])
    assert crashed_as_fixed.status_code == 422 and "healthy run" in crashed_as_fixed.text
    empty = submit(learner, runs["failed"], runs["fixed"], wrong_tool="  ")
    assert empty.status_code == 422 and "required" in empty.text
    assert count(app, Submission) == 0

    created = submit(learner, runs["crashed"], runs["fixed"])
    assert created.status_code == 303
    again = submit(learner, runs["failed"], runs["fixed"])
    assert again.status_code == 409 and "still waiting for review" in again.text
    assert count(app, Submission) == 1


def test_someone_elses_attempt_cannot_be_submitted(classroom: Any) -> None:
    app, learner = classroom["app"], classroom["learner"]
    other = make_user(app.state.engine, "mallory")
    foreign = make_attempt(app.state.engine, other.saved_id, status="succeeded", observed="fits")
    response = submit(learner, classroom["runs"]["failed"], foreign)
    assert response.status_code == 422 and "your own attempts" in response.text


def test_review_cycle_keeps_history(classroom: Any) -> None:
    learner, instructor, runs, app = (
        classroom["learner"],
        classroom["instructor"],
        classroom["runs"],
        classroom["app"],
    )
    first = submit(learner, runs["failed"], runs["fixed"]).headers["location"]
    queue = instructor.get("/reviews").text
    assert first in queue

    no_comment = instructor.post(
        f"{first}/reviews", data={**RUBRIC_ALL, "decision": "changes_requested"}
    )
    assert no_comment.status_code == 422 and "say what to change" in no_comment.text
    missing_score = instructor.post(f"{first}/reviews", data={"decision": "accepted"})
    assert missing_score.status_code == 422
    assert count(app, Review) == 0

    decided = instructor.post(
        f"{first}/reviews",
        data={
            **RUBRIC_ALL,
            "score.connects": "0",
            "decision": "changes_requested",
            "comment": "Tie it to your project.",
        },
        follow_redirects=False,
    )
    assert decided.status_code == 303
    twice = instructor.post(f"{first}/reviews", data={**RUBRIC_ALL, "decision": "accepted"})
    assert twice.status_code == 409 and "already been reviewed" in twice.text

    progress_page = learner.get("/progress").text
    assert "changes requested · rubric 6/8 · “Tie it to your project.”" in progress_page
    drill_page = learner.get("/drills/overfit-one-batch").text
    assert "Changes requested" in drill_page and "Tie it to your project." in drill_page
    assert "rubric 6/8" in drill_page

    second = submit(learner, runs["failed"], runs["fixed"], mechanism="Now with *ln 4*.").headers[
        "location"
    ]
    assert second != first
    accepted = instructor.post(
        f"{second}/reviews", data={**RUBRIC_ALL, "decision": "accepted"}, follow_redirects=False
    )
    assert accepted.status_code == 303

    page = learner.get(second).text
    assert 'id="version-1"' in page and 'id="version-2"' in page
    assert "Tie it to your project." in page and "<em>ln 4</em>" in page
    with Session(app.state.engine) as session:
        statuses = {s.version: s.status for s in session.exec(select(Submission)).all()}
    assert statuses == {1: "changes_requested", 2: "accepted"}
    progress = learner.get("/progress").text
    assert 'data-drill="overfit-one-batch">accepted<' in progress
    # The newest reviewed version's decision is shown beside the status, linking to it.
    assert f'<a href="{second}">v2</a>' in progress and "accepted · rubric 8/8" in progress


def test_queue_is_oldest_first_and_filters(classroom: Any) -> None:
    app, instructor = classroom["app"], classroom["instructor"]
    engine = app.state.engine
    urls = []
    for name in ("ann", "bob"):
        user = make_user(engine, name)
        with Session(engine) as session:
            session.add(CohortMembership(cohort_id=classroom["cohort"], learner_id=user.saved_id))
            session.commit()
        client = TestClient(app)
        log_in(client, name)
        failed = make_attempt(engine, user.saved_id, status="failed", observed=None)
        fixed = make_attempt(engine, user.saved_id, status="succeeded", observed="fits")
        urls.append(submit(client, failed, fixed).headers["location"])
    queue = instructor.get("/reviews").text
    assert queue.index(urls[0]) < queue.index(urls[1])
    only_bob = instructor.get("/reviews", params={"learner": "bob"}).text
    assert urls[1] in only_bob and urls[0] not in only_bob
    other_drill = instructor.get("/reviews", params={"drill": "break-the-graph"}).text
    assert urls[0] not in other_drill and urls[1] not in other_drill


def test_cohort_grid_and_csv_show_each_learner(classroom: Any) -> None:
    learner, instructor, runs = classroom["learner"], classroom["instructor"], classroom["runs"]
    submit(learner, runs["failed"], runs["fixed"])
    grid = instructor.get(f"/cohorts/{classroom['cohort']}").text
    assert "Lee" in grid and "pending review" in grid
    csv_response = instructor.get(f"/cohorts/{classroom['cohort']}/progress.csv")
    assert csv_response.headers["content-type"].startswith("text/csv")
    lines = csv_response.text.strip().splitlines()
    assert lines[0].startswith("username,display_name,overfit-one-batch")
    assert lines[1].startswith("lee,Lee,pending review")


def test_learners_join_cohorts_by_code(classroom: Any) -> None:
    app = classroom["app"]
    make_user(app.state.engine, "newbie")
    client = TestClient(app)
    log_in(client, "newbie")
    wrong = client.post("/cohorts/join", data={"code": "NOPE"}, follow_redirects=True)
    assert "No cohort has that code." in wrong.text
    joined = client.post("/cohorts/join", data={"code": "abcdefgh"}, follow_redirects=True)
    assert "You joined the cohort." in joined.text and "Autumn" in joined.text
    client.post("/cohorts/join", data={"code": "ABCDEFGH"})
    assert count(app, CohortMembership) == 2  # lee and newbie, no duplicate


@pytest.mark.parametrize("raw", [str(2**63), str(2**64), "9" * 40, "²", "-1", "0"])
def test_an_attempt_id_no_row_can_have_is_a_422_naming_the_field(classroom: Any, raw: str) -> None:
    learner, runs, app = classroom["learner"], classroom["runs"], classroom["app"]
    data = {"failed_attempt_id": raw, "fixed_attempt_id": str(runs["fixed"]), **TEXTS}
    response = learner.post(
        "/drills/overfit-one-batch/submissions", data=data, follow_redirects=False
    )
    assert response.status_code == 422 and "pick one of your own attempts" in response.text
    assert count(app, Submission) == 0


def test_a_pending_version_says_whose_queue_it_is_in(client: TestClient) -> None:
    """Issue 30, point 3: without a cohort no instructor sees the submission; the page says so
    and points to the join code, instead of promising an instructor's review."""
    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    failed, fixed = add_attempt(engine, me, fixed=False), add_attempt(engine, me, fixed=True)
    add_submission(engine, me, failed, fixed)
    alone = client.get("/drills/overfit-one-batch").text
    assert "You are in no cohort" in alone and 'href="/progress#join-code"' in alone
    assert "your instructor's review" not in alone
    teacher = make_user(engine, "a-teacher", Role.instructor)
    assert teacher.id is not None
    add_cohort(engine, teacher.id, name="Tuesday", code="TUES-0001", learners=[me])
    joined = client.get("/drills/overfit-one-batch").text
    assert "waiting for your instructor's review" in joined and "no cohort" not in joined


def test_the_submit_form_starts_from_the_explained_run_and_its_words(client: TestClient) -> None:
    """Issue 30, point 2: the four questions of the explain-back are the submission's four, so
    the form starts from the newest explain-back of a candidate run, with that run picked (not
    merely the newest run)."""
    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    explained = add_attempt(engine, me, fixed=False)
    newest_failed = add_attempt(engine, me, fixed=False)
    add_attempt(engine, me, fixed=True)
    add_explanation(engine, explained, me, "The labels were shuffled apart from their inputs.")
    page = client.get("/drills/overfit-one-batch").text
    form = page.split('id="submit-evidence"', 1)[1]
    assert f'<option value="{explained}" selected>' in form
    assert f'<option value="{newest_failed}" selected>' not in form
    assert form.count("The labels were shuffled apart from their inputs.") == 4
