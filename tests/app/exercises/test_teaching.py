"""What issue 28 asks of exercises for teaching, on stored rows (no sandbox needed): the help
ladder's rungs each kept with its time, the study path counting a pass only before the solution,
the cohort's figures per exercise from several learners' runs, and an instructor's comment on a
run, listed in the review queue and read by the learner."""

import csv
import io
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.accounts.models import Role
from app.exercises import service
from app.exercises.cohort import cohort_exercises
from app.exercises.models import ExerciseHelp, ExerciseHelpStep
from app.practice.study_path import path_standing
from drills.exercises.registry import get_exercise
from tests.app.factories import (
    EXERCISE,
    add_cohort,
    add_exercise_run,
    add_user,
    app_of,
    engine_of,
    signed_in,
)


def me(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def test_each_rung_of_the_ladder_is_kept_once_with_its_time(client: TestClient) -> None:
    exercise = get_exercise(EXERCISE)
    learner = me(client)
    with Session(engine_of(client)) as session:
        with pytest.raises(service.NotEarned):
            service.reveal_solution(session, learner_id=learner, exercise=exercise)
        service.reveal_hint(session, learner_id=learner, exercise=exercise, rung=2)  # two at once
        service.reveal_hint(session, learner_id=learner, exercise=exercise, rung=1)  # shown
        service.reveal_hint(session, learner_id=learner, exercise=exercise)
        service.reveal_solution(session, learner_id=learner, exercise=exercise)
        service.reveal_solution(session, learner_id=learner, exercise=exercise)  # shown
        steps = service.help_steps(session, learner_id=learner, exercise_slug=EXERCISE)
        help_taken = service.help_of(session, learner_id=learner, exercise=exercise)
    assert [step.step for step in steps] == ["hint-1", "hint-2", "hint-3", "solution"]
    times = [step.taken_at for step in steps]
    assert times == sorted(times) and times[0] == times[1]  # one press, one time
    assert times[-1] == help_taken.solution_shown_at
    answered = client.get(f"/api/exercises/{EXERCISE}").json()["help_steps"]
    assert [row["step"] for row in answered] == ["hint-1", "hint-2", "hint-3", "solution"]
    assert all(row["taken_at"] for row in answered)


def test_the_study_path_counts_an_exercise_only_by_a_pass_before_the_solution(
    client: TestClient,
) -> None:
    engine, learner, key = engine_of(client), me(client), "exercise:overfit-ladder"

    def done() -> bool:
        with Session(engine) as session:
            standing = path_standing(session, learner_id=learner)
        return next(s.done for stage in standing.stages for s in stage.steps if s.step.key == key)

    add_exercise_run(engine, learner, exercise="overfit-ladder", judgement="failed")
    assert not done()
    add_exercise_run(engine, learner, exercise="overfit-ladder", judgement="passed", hints_taken=3,
                     solution_shown=True)  # fmt: skip
    assert not done()
    add_exercise_run(engine, learner, exercise="overfit-ladder", judgement="passed", hints_taken=2)
    assert done()


def fail(*keys: str) -> list[dict[str, Any]]:
    return [{"key": key, "title": f"Check {key}", "status": "fail"} for key in keys]


PASS = [{"key": "fits-1", "title": "Check fits-1", "status": "pass"}]


@pytest.fixture
def cohort(client: TestClient) -> dict[str, Any]:
    """Four learners on EXERCISE, with known answers:
    ann fails (fits-1), fails (fits-2), passes: 3 runs to pass, 1 hint;
    bob passes at once, no hint; cy fails (fits-1, fits-2) and stops, 2 hints;
    dee fails (fits-1), reads the solution (3 hints), passes: 2 runs, after the solution.
    An outsider's runs count for nothing."""
    engine = engine_of(client)
    teacher = add_user(engine, "ida", Role.instructor)
    ann, bob, cy, dee = (add_user(engine, name) for name in ("ann", "bob", "cy", "dee"))
    outsider = add_user(engine, "out")
    cohort_id = add_cohort(
        engine, teacher, name="Winter", code="WINTER12", learners=[ann, bob, cy, dee]
    )
    run = add_exercise_run
    run(engine, ann, checks=fail("fits-1"))
    run(engine, ann, checks=fail("fits-2"))
    run(engine, ann, judgement="passed", checks=PASS, hints_taken=1)
    run(engine, bob, judgement="passed", checks=PASS)
    run(engine, cy, checks=fail("fits-1", "fits-2"), hints_taken=2)
    run(engine, dee, checks=fail("fits-1"))
    after = run(engine, dee, judgement="passed", checks=PASS, hints_taken=3, solution_shown=True)
    run(engine, outsider, checks=fail("fits-5"))
    shown = datetime(2026, 12, 1, tzinfo=UTC)
    with Session(engine) as session:
        for learner, hints, solution in ((ann, 1, None), (cy, 2, None), (dee, 3, shown)):
            session.add(ExerciseHelp(learner_id=learner, exercise_slug=EXERCISE,
                                     hints_taken=hints, solution_shown_at=solution))  # fmt: skip
        session.add(ExerciseHelpStep(learner_id=dee, exercise_slug=EXERCISE, step="solution",
                                     taken_at=shown))  # fmt: skip
        session.commit()
    return {
        "id": cohort_id,
        "learners": [ann, bob, cy, dee],
        "dee": dee,
        "after": after,
        "instructor": signed_in(app_of(client), "ida"),
    }


def test_the_cohort_figures_come_from_every_learners_runs(
    client: TestClient, cohort: dict[str, Any]
) -> None:
    with Session(engine_of(client)) as session:
        results = cohort_exercises(session, cohort["learners"])
    (figures,) = results["figures"]
    assert (figures.slug, figures.tried, figures.passed, figures.after_solution) == (
        EXERCISE, 4, 3, 1,
    )  # fmt: skip
    assert figures.pass_rate == 0.75
    assert [(c.title, c.learners) for c in figures.failed_checks] == [
        ("Check fits-1", 3),
        ("Check fits-2", 2),
    ]
    assert figures.median_tries == 2  # ann 3, bob 1, dee 2
    assert figures.median_hints == 1.5  # ann 1, bob 0, cy 2, dee 3
    assert results["cells"][(cohort["dee"], EXERCISE)]["after_solution"] is True
    assert results["solutions_shown"] == {cohort["dee"]: [EXERCISE]}
    # The page and the CSV say the same.
    page = cohort["instructor"].get(f"/cohorts/{cohort['id']}").text
    row = page.split(f'<tr data-exercise="{EXERCISE}">', 1)[1].split("</tr>", 1)[0]
    assert "<td>3 (75%)</td>" in row and "Check fits-1 (3); Check fits-2 (2)" in row
    assert "<td>2</td><td>1.5</td>" in row
    grid = page.split('id="exercise-grid"', 1)[1].split("</table>", 1)[0]
    assert grid.count("after the solution") == 1
    text = cohort["instructor"].get(f"/cohorts/{cohort['id']}/progress.csv").text
    rows = {row[0]: row for row in csv.reader(io.StringIO(text))}
    assert rows["username"][-1] == "solution shown"
    assert (rows["dee"][-1], rows["ann"][-1]) == (EXERCISE, "")


def test_an_instructor_comments_on_a_run_and_its_learner_reads_it(
    client: TestClient, cohort: dict[str, Any]
) -> None:
    teacher, run_id = cohort["instructor"], cohort["after"]
    url = f"/exercises/{EXERCISE}/runs/{run_id}"
    queue = teacher.get("/reviews").text.split('id="code-queue"', 1)[1].split("</table>", 1)[0]
    assert f'href="{url}#comments"' in queue and "(after the solution)" in queue
    assert "fits-5" not in queue  # the outsider is not theirs
    token = teacher.headers["X-CSRF-Token"]
    page = teacher.get(url).text
    assert 'id="after-solution"' in page
    assert "The solution at 2026-12-01 00:00, before this run" in page
    refused = teacher.post(f"{url}/comments", data={"body": "  ", "csrf_token": token})
    assert refused.status_code == 422 and "empty" in refused.text
    posted = teacher.post(
        f"{url}/comments",
        data={"body": "You typed the fix you read: <try> it from memory.", "csrf_token": token},
        follow_redirects=False,
    )
    assert posted.status_code == 303
    dee = signed_in(app_of(client), "dee")
    seen = dee.get(url).text
    assert "You typed the fix you read: &lt;try&gt; it from memory." in seen
    assert 'name="body"' not in seen  # the learner reads, never comments
    assert seen.count('class="run-comment"') == 1
    assert "<td>1</td>" in teacher.get("/reviews").text.split('id="code-queue"', 1)[1]
