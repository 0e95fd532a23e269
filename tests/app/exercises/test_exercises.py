"""Code exercises through the app: list, run (queued, streamed, judged in the sandbox), the hint
ladder and the earned solution, what is stored, and who may read what."""

import html
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.exercises.models import ExerciseHelp, ExerciseRun
from app.runs.models import Attempt
from drills.cli import main as drills_command
from drills.exercises.registry import all_exercises, get_exercise
from drills.sandbox import available
from tests.app.factories import add_user, app_of, engine_of, row_counts, signed_in
from tests.conftest import wait_for_exercise_run

pytestmark = pytest.mark.skipif(available() is not None, reason=f"no sandbox: {available()}")

SLUG = "overfit-shuffled-pairs"


def exercise_slug() -> str:
    slugs = [exercise.slug for exercise in all_exercises()]
    return SLUG if SLUG in slugs else slugs[0]


def post_run(client: TestClient, slug: str, code: str) -> dict[str, Any]:
    response = client.post(f"/api/exercises/{slug}/runs", json={"code": code})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_api_lists_every_exercise_without_its_solution(client: TestClient) -> None:
    listed = client.get("/api/exercises").json()
    assert {row["slug"] for row in listed} == {exercise.slug for exercise in all_exercises()}
    assert len(listed) >= 5
    for row in listed:
        exercise = get_exercise(row["slug"])
        detail = client.get(row["url"]).json()
        assert detail["starter"] == exercise.starter
        assert detail["story"] == exercise.story
        assert detail["solution"] is None and detail["hints_shown"] == []
        page = client.get(f"/exercises/{exercise.slug}").text
        # The solution's own lines (those not in the starter) appear nowhere before it is earned.
        own = [
            line.strip()
            for line in exercise.solution.splitlines()
            if line.strip() and line.strip() not in exercise.starter
        ]
        for text in (page, str(detail)):
            assert [line for line in own if line in text and len(line) > 12] == []


def test_the_reference_solution_passes_and_is_stored_with_its_diff(client: TestClient) -> None:
    exercise = get_exercise(exercise_slug())
    created = post_run(client, exercise.slug, exercise.solution)
    assert created["urls"]["events"] == f"/api/exercises/runs/{created['id']}/events"
    done = wait_for_exercise_run(client, created["id"])
    assert done["status"] == "succeeded", done
    assert done["judgement"] == "passed", done["checks"]
    assert done["checks"] and all(check["status"] == "pass" for check in done["checks"])
    assert done["metrics"], "the harness's curve was streamed and kept"
    assert done["diff"].startswith("--- starter.py")
    assert done["score"] == 1.0
    with Session(engine_of(client)) as session:
        run = session.exec(select(ExerciseRun).where(ExerciseRun.attempt_id == done["id"])).one()
        assert run.code == exercise.solution
        assert len(run.code_sha256) == 64
    # The run page shows the verdict and the checks.
    page = client.get(done["urls"]["page"]).text
    assert "judgement-passed" in page and "check-pass" in page


def test_a_runs_code_downloads_as_submitted_to_whoever_may_read_the_run(
    client: TestClient,
) -> None:
    exercise = get_exercise(exercise_slug())
    # Line ends, a tab and text beyond ASCII: the download is the stored file, byte for byte.
    code = exercise.starter + "\n# relu \u2192 GELU?\t(\u00e9t\u00e9)\n"
    run = wait_for_exercise_run(client, post_run(client, exercise.slug, code)["id"])
    url = f"/api/exercises/runs/{run['id']}/code"
    assert run["urls"]["code"] == url
    got = client.get(url)
    assert got.status_code == 200
    assert got.content == code.encode()
    assert got.headers["content-type"] == "text/x-python; charset=utf-8"
    # The name the stored replay command reads it under.
    assert got.headers["content-disposition"] == 'attachment; filename="exercise.py"'
    assert "--code exercise.py" in run["command"]
    assert f'href="{url}"' in client.get(run["urls"]["page"]).text
    add_user(engine_of(client), "learner-b")
    assert signed_in(app_of(client), "learner-b").get(url).status_code == 404
    assert TestClient(client.app).get(url).status_code == 401


def test_a_stored_run_replays_from_its_downloaded_code_to_the_same_judgement(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    exercise = get_exercise(exercise_slug())
    done = wait_for_exercise_run(client, post_run(client, exercise.slug, exercise.solution)["id"])
    assert done["judgement"] == "passed", done
    download = client.get(done["urls"]["code"])
    filename = download.headers["content-disposition"].split('filename="')[1].rstrip('"')
    (tmp_path / filename).write_bytes(download.content)
    # The stored command, run as the CLI runs it (in-process), in the folder holding the file.
    words = shlex.split(done["command"])
    assert words[:3] == ["python", "-m", "drills"]
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert drills_command([*words[3:], "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    with Session(engine_of(client)) as session:
        attempt = session.get(Attempt, done["id"])
        assert attempt is not None
        seed, verdict = attempt.seed, attempt.observed_hypothesis
    assert replayed["exercise"] == exercise.slug and replayed["seed"] == seed
    assert replayed["status"] == done["judgement"]
    assert replayed["checks"] == done["checks"]
    assert replayed["verdict"] == verdict


def test_the_starter_as_given_is_not_attempted_and_a_wrong_fix_fails(client: TestClient) -> None:
    exercise = get_exercise(exercise_slug())
    untouched = wait_for_exercise_run(
        client, post_run(client, exercise.slug, exercise.starter)["id"]
    )
    assert untouched["judgement"] == "not-attempted", untouched
    # A change that fixes nothing: the starter with a comment added is judged, and fails.
    edited = exercise.starter + "\n# I looked at it.\n"
    failed = wait_for_exercise_run(client, post_run(client, exercise.slug, edited)["id"])
    assert failed["status"] == "succeeded" and failed["judgement"] == "failed", failed
    assert any(check["status"] == "fail" for check in failed["checks"])


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({}, 422),
        ({"code": 12}, 422),
        ({"code": "   "}, 422),
        ({"code": "x" * 64_001}, 422),
        ({"code": "a\x00b"}, 422),
    ],
)
def test_a_bad_submission_is_refused_and_nothing_is_stored(
    client: TestClient, body: dict[str, Any], status: int
) -> None:
    before = row_counts(engine_of(client))
    response = client.post(f"/api/exercises/{exercise_slug()}/runs", json=body)
    assert response.status_code == status, response.text
    assert row_counts(engine_of(client)) == before


def test_unknown_exercises_and_anonymous_runs_are_refused(
    client: TestClient, anonymous: TestClient
) -> None:
    assert client.get("/api/exercises/no-such-thing").status_code == 404
    assert client.post("/api/exercises/no-such-thing/runs", json={"code": "x"}).status_code == 404
    visitor = TestClient(client.app)
    assert visitor.post(
        f"/api/exercises/{exercise_slug()}/runs", json={"code": "x"}
    ).status_code in (
        401,
        403,
    )


def test_hints_come_one_rung_at_a_time_and_the_solution_after_the_last(
    client: TestClient,
) -> None:
    exercise = get_exercise(exercise_slug())
    url = f"/api/exercises/{exercise.slug}"
    assert client.post(f"{url}/solution").status_code == 409
    first = client.post(f"{url}/hints", json={"rung": 1}).json()
    again = client.post(f"{url}/hints", json={"rung": 1}).json()  # a double press
    assert first == again and first["hints_shown"] == [exercise.hints[0]]
    for rung in range(2, len(exercise.hints) + 1):
        client.post(f"{url}/hints", json={"rung": rung})
    shown = client.post(f"{url}/solution")
    assert shown.status_code == 200
    assert shown.json()["solution"] == exercise.solution
    assert client.get(url).json()["solution"] == exercise.solution
    with Session(engine_of(client)) as session:
        help_taken = session.exec(select(ExerciseHelp)).one()
        assert help_taken.hints_taken == len(exercise.hints)
        assert help_taken.solution_shown_at is not None
    # A pass after the solution was shown keeps that, and scores low.
    done = wait_for_exercise_run(client, post_run(client, exercise.slug, exercise.solution)["id"])
    assert done["judgement"] == "passed", done
    assert done["solution_shown"] is True
    assert done["hints_taken"] == len(exercise.hints) and done["score"] == 0.2


def test_runs_are_their_learners_own_and_never_listed_as_drill_attempts(
    client: TestClient,
) -> None:
    exercise = get_exercise(exercise_slug())
    run = wait_for_exercise_run(client, post_run(client, exercise.slug, exercise.starter)["id"])
    # Not a drill attempt: the drill's attempt API and page do not know it.
    assert client.get(f"/api/attempts/{run['id']}").status_code == 404
    for page in (f"/drills/{exercise.drill}", "/progress"):
        assert f'/attempts/{run["id"]}"' not in client.get(page).text
    add_user(engine_of(client), "learner-b")
    other = signed_in(app_of(client), "learner-b")
    assert other.get(f"/api/exercises/runs/{run['id']}").status_code == 404
    assert other.get(run["urls"]["page"]).status_code == 404
    assert other.get(f"/api/exercises/runs/{run['id']}/events").status_code == 404
    with Session(engine_of(client)) as session:
        attempt = session.get(Attempt, run["id"])
        assert attempt is not None and attempt.exercise_slug == exercise.slug
        assert not attempt.is_drill_page_run


def test_the_page_runs_the_code_from_its_form(client: TestClient) -> None:
    exercise = get_exercise(exercise_slug())
    page = client.get(f"/exercises/{exercise.slug}")
    assert page.status_code == 200 and "data-code-editor" in page.text
    token = client.headers["X-CSRF-Token"]
    # As a browser posts a textarea: CRLF line ends, stored as the file's own "\n".
    posted = client.post(
        f"/exercises/{exercise.slug}/runs",
        data={"code": (exercise.starter + "\n").replace("\n", "\r\n"), "csrf_token": token},
        follow_redirects=False,
    )
    assert posted.status_code == 303
    run_id = int(posted.headers["location"].rsplit("/", 1)[1])
    done = wait_for_exercise_run(client, run_id)
    assert "\r" not in done["diff"] and done["judgement"] == "not-attempted"
    # The editor opens on the learner's latest code.
    assert exercise.starter + "\n" in html.unescape(client.get(f"/exercises/{exercise.slug}").text)
    refused = client.post(
        f"/exercises/{exercise.slug}/runs", data={"code": " ", "csrf_token": token}
    )
    assert refused.status_code == 422 and "empty" in refused.text


def test_the_instructor_finds_each_learners_run_and_reads_its_diff_beside_its_checks(
    anonymous: TestClient,
) -> None:
    from app.accounts.models import Role
    from tests.app.factories import add_cohort, add_exercise_run

    engine = engine_of(anonymous)
    instructor = add_user(engine, "teacher", Role.instructor)
    learner = add_user(engine, "pupil")
    cohort = add_cohort(engine, instructor, name="C1", code="CCCC4444", learners=[learner])
    run_id = add_exercise_run(engine, learner, judgement="failed")
    teacher = signed_in(app_of(anonymous), "teacher")
    grid = teacher.get(f"/cohorts/{cohort}").text
    link = f'href="/exercises/{SLUG}/runs/{run_id}"'
    assert 'id="exercise-grid"' in grid and link in grid
    page = teacher.get(f"/exercises/{SLUG}/runs/{run_id}").text
    assert "check-fail" in page and "The learner&#39;s changes to the starter" in page


def test_the_learners_code_and_output_are_shown_as_text(client: TestClient) -> None:
    from app.exercises.models import ExerciseRun as Run
    from tests.app.factories import add_exercise_run, scan

    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    run_id = add_exercise_run(engine, me)
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    with Session(engine) as session:
        run = session.exec(select(Run).where(Run.attempt_id == run_id)).one()
        run.diff, run.stdout, run.stderr = f"+# {hostile}\n", hostile, hostile
        run.checks = [{"key": "k", "title": hostile, "status": "fail", "message": hostile}]
        session.add(run)
        session.commit()
    page = client.get(f"/exercises/{SLUG}/runs/{run_id}").text
    problems, text = scan(page)
    assert problems == [] and hostile in text
