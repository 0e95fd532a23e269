"""Portfolio export: the statements, the files and their names, and who may export what."""

import hashlib
import json
import re
from datetime import date
from typing import Any

import rfc8785
from fastapi.testclient import TestClient

from app.grading.models import RUBRIC, Review
from app.web.templating import RUN_STATUS_WORDS
from drills.core.digest import metrics_digest
from drills.core.registry import get_drill
from tests.app.factories import DRILL, engine_of
from tests.app.portfolio_helpers import classroom, reviewed_learner, unzip
from tests.conftest import PREDICTION, wait_until_final

FILENAME = re.compile(r'^attachment; filename="(drillbook-[a-z0-9-]+\.(html|json|zip))"$')


def jcs_sha256(value: Any) -> str:
    """What a statement's digest must be: sha256 of its RFC 8785 bytes (computed here with the
    library directly, not through the app's own canonical module)."""
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def test_statements_are_xapi_shaped_one_per_attempt_submission_and_review(
    anonymous: TestClient,
) -> None:
    room = classroom(anonymous)
    a = room.learner_a
    document = room.clients["learner-a"].get("/portfolio/export.json").json()
    ids = [s["id"] for s in document["statements"]]
    assert ids == [
        f"drillbook:attempt:{a.failed}",
        f"drillbook:attempt:{a.fixed}",
        f"drillbook:submission:{a.submission}",
        f"drillbook:review:{a.review}",
        f"drillbook:submission:{a.submission + 1}",
    ]
    by_id = {s["id"]: s for s in document["statements"]}
    failed = by_id[f"drillbook:attempt:{a.failed}"]
    assert failed["actor"]["account"]["name"] == "learner-a"
    assert failed["verb"]["display"]["en"] == "completed"  # the run itself succeeded
    assert failed["object"]["id"] == "urn:drillbook:drill:overfit-one-batch"
    assert failed["result"]["signature"]["final_loss"] == 1.38
    assert "digest" in failed["result"] and "metrics" in failed["result"]
    assert failed["result"]["prediction"]["text"] == "The labels were shuffled every step."
    assert failed["context"]["command"].startswith("python -m drills run overfit-one-batch")
    assert failed["context"]["knobs"]["bug"] == "shuffled-labels"
    assert set(failed["context"]) >= {"command", "environment", "knobs", "seed"}
    review = by_id[f"drillbook:review:{a.review}"]
    assert review["verb"]["display"]["en"] == "changes-requested"
    assert review["actor"]["account"]["name"] == "instructor-1"
    assert review["context"]["learner"]["account"]["name"] == "learner-a"
    assert review["result"]["response"] == "Say which tensor was shuffled."
    assert review["result"]["score"] == {"raw": 4, "min": 0, "max": 8}
    for statement in document["statements"]:
        content = {k: v for k, v in statement.items() if k != "digest"}
        assert statement["digest"] == jcs_sha256(content)
        assert statement["timestamp"].endswith("Z")
    signature = document["signature"]
    assert signature["algorithm"] == "Ed25519" and signature["value"] and signature["public_key"]
    assert document["canonicalization"] == "jcs"


def test_failed_runs_and_accepted_reviews_get_their_verbs(anonymous: TestClient) -> None:
    from app.accounts.models import Role
    from app.runs.models import AttemptStatus
    from tests.app.factories import add_attempt, add_review, add_submission, add_user, signed_in

    engine = engine_of(anonymous)
    teacher = add_user(engine, "teacher", Role.instructor)
    learner = add_user(engine, "learner-c")
    broken = add_attempt(engine, learner, fixed=False, status=AttemptStatus.timed_out)
    fixed = add_attempt(engine, learner, fixed=True)
    submission = add_submission(engine, learner, broken, fixed, status="accepted")
    add_review(engine, submission, teacher, comment="Good.", decision="accepted")
    client = signed_in(anonymous.app, "learner-c")  # type: ignore[arg-type]
    verbs = [
        s["verb"]["display"]["en"]
        for s in client.get("/portfolio/export.json").json()["statements"]
    ]
    assert verbs == ["failed", "completed", "submitted", "accepted"]


def test_the_three_downloads_have_server_made_names(anonymous: TestClient) -> None:
    room = classroom(anonymous)
    client = room.clients["learner-a"]
    today = date.today().isoformat()
    base = f"drillbook-portfolio-learner-a-{today}"
    for kind, media in (
        ("html", "text/html"),
        ("json", "application/json"),
        ("zip", "application/zip"),
    ):
        response = client.get(f"/portfolio/export.{kind}")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(media)
        match = FILENAME.match(response.headers["content-disposition"])
        assert match is not None and match.group(1) == f"{base}.{kind}"
    files = unzip(client.get("/portfolio/export.zip").content)
    assert sorted(files) == [f"{base}.html", f"{base}.json"]
    assert json.loads(files[f"{base}.json"])["statements"]
    assert b"<svg" in files[f"{base}.html"]


def test_a_learner_exports_only_their_own_work(anonymous: TestClient) -> None:
    room = classroom(anonymous)
    document = room.clients["learner-b"].get("/portfolio/export.json").json()
    # Attempts and submissions are the learner's own acts; reviews are about the learner.
    learners = {
        (s["context"]["learner"] if "learner" in s["context"] else s["actor"])["account"]["name"]
        for s in document["statements"]
    }
    assert learners == {"learner-b"}
    own = {
        f"drillbook:attempt:{room.learner_b.failed}",
        f"drillbook:attempt:{room.learner_b.fixed}",
    }
    assert {s["id"] for s in document["statements"] if "attempt:" in s["id"]} == own
    html = room.clients["learner-b"].get("/portfolio/export.html").text
    assert "Learner-A" not in html and "The labels were shuffled every step." not in html
    # No export URL names a learner: a query parameter cannot point it at someone else.
    other = room.clients["learner-b"].get("/portfolio/export.json?learner_id=1&username=learner-a")
    assert {s["id"] for s in other.json()["statements"]} == {
        s["id"] for s in document["statements"]
    }


def test_anonymous_visitors_are_sent_to_log_in(anonymous: TestClient) -> None:
    for kind in ("html", "json", "zip"):
        response = anonymous.get(f"/portfolio/export.{kind}", follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/login")


def test_the_cohort_export_holds_every_learner_of_the_cohort_and_no_other(
    anonymous: TestClient,
) -> None:
    room = classroom(anonymous)
    extra = reviewed_learner(engine_of(anonymous), "learner-z", room.instructor)
    from app.accounts.models import CohortMembership
    from tests.app.factories import _save

    _save(engine_of(anonymous), CohortMembership(cohort_id=room.cohort_a, learner_id=extra.id))
    response = room.clients["instructor-1"].get(f"/cohorts/{room.cohort_a}/export.zip")
    assert response.status_code == 200
    today = date.today().isoformat()
    base = f"drillbook-cohort-{room.cohort_a}-{today}"
    assert FILENAME.match(response.headers["content-disposition"]).group(1) == f"{base}.zip"  # type: ignore[union-attr]
    files = unzip(response.content)
    assert sorted(files) == [f"{base}.html", f"{base}.json"]
    document = json.loads(files[f"{base}.json"])
    attempts = {
        s["actor"]["account"]["name"] for s in document["statements"] if "attempt:" in s["id"]
    }
    assert attempts == {"learner-a", "learner-z"}
    assert document["exporter"]["by"] == "instructor-1"
    # Another cohort's instructor and the learners themselves cannot export it.
    for other in ("instructor-2", "learner-a", "learner-b"):
        refused = room.clients[other].get(f"/cohorts/{room.cohort_a}/export.zip")
        assert refused.status_code == 404, other


def test_the_progress_and_cohort_pages_link_the_exports(anonymous: TestClient) -> None:
    room = classroom(anonymous)
    progress = room.clients["learner-a"].get("/progress").text
    for url in (
        "/portfolio/export.html",
        "/portfolio/export.json",
        "/portfolio/export.zip",
        "/portfolio/verify",
    ):
        assert f'href="{url}"' in progress
    cohort = room.clients["instructor-1"].get(f"/cohorts/{room.cohort_a}").text
    assert f'href="/cohorts/{room.cohort_a}/export.zip"' in cohort


def test_real_runs_export_with_their_metrics_digest_and_a_drawn_chart_each(
    client: TestClient,
) -> None:
    ids = []
    for bug in ("shuffled-labels", "none"):
        body = {"drill": DRILL, **PREDICTION, "knobs": {"bug": bug, "steps": 40}}
        created = client.post("/api/attempts", json=body).json()
        ids.append(wait_until_final(client, created["id"])["id"])
    document = client.get("/portfolio/export.json").json()
    by_id = {s["id"]: s for s in document["statements"]}
    for attempt_id in ids:
        stored = client.get(f"/api/attempts/{attempt_id}").json()
        statement = by_id[f"drillbook:attempt:{attempt_id}"]
        assert statement["verb"]["display"]["en"] == "completed"
        assert statement["result"]["digest"] == stored["digest"]
        # The series in the export are the run's own: they hash to the drill's digest.
        assert metrics_digest(statement["result"]["metrics"]) == stored["digest"]
        assert statement["context"]["environment"]["torch"]
    html = client.get("/portfolio/export.html").text
    charts = len(get_drill(DRILL).charts)
    assert html.count("<svg") == 2 * charts
    assert html.count('<path class="trace"') >= 2 * charts


def test_replays_travel_with_their_attempt(anonymous: TestClient) -> None:
    from sqlmodel import Session

    from app.accounts.models import Role
    from app.runs.replay_models import Replay, ReplayVerdict
    from tests.app.factories import add_attempt, add_user, signed_in

    engine = engine_of(anonymous)
    teacher = add_user(engine, "teacher", Role.instructor)
    learner = add_user(engine, "learner-r")
    attempt = add_attempt(engine, learner, fixed=True)
    with Session(engine) as session:
        session.add(
            Replay(
                attempt_id=attempt,
                requested_by=teacher,
                status="finished",
                verdict=ReplayVerdict.within_tolerance,
                digest="f" * 64,
                max_relative_difference=3e-7,
            )
        )
        session.commit()
    client = signed_in(anonymous.app, "learner-r")  # type: ignore[arg-type]
    (statement,) = client.get("/portfolio/export.json").json()["statements"]
    (replay,) = statement["result"]["replays"]
    assert replay["verdict"] == "within_tolerance" and replay["digest"] == "f" * 64
    page = client.get("/portfolio/export.html").text
    assert "within tolerance" in page and "Replays of the stored command" in page


def test_the_exported_rubric_reads_in_rubric_order_whatever_order_the_database_keeps() -> None:
    # JSONB (PostgreSQL) hands keys back shortest first; SQLite in the order they were written.
    scores = {key: {"score": 2, "comment": ""} for key, _label in RUBRIC}
    jsonb_order = dict(sorted(scores.items(), key=lambda item: (len(item[0]), item[0])))
    assert list(jsonb_order) != list(scores)
    for stored in (scores, jsonb_order):
        review = Review(submission_id=1, instructor_id=1, decision="accepted", scores=stored)
        assert [key for key, _ in review.rubric_scores] == [key for key, _ in RUBRIC]


def test_exercise_runs_export_with_their_code_diff_and_checks_signed(
    anonymous: TestClient,
) -> None:
    from tests.app.factories import add_exercise_run, add_user
    from tests.conftest import log_in

    engine = engine_of(anonymous)
    learner = add_user(engine, "coder")
    run_id = add_exercise_run(engine, learner, judgement="failed")
    log_in(anonymous, "coder")
    document = anonymous.get("/portfolio/export.json").json()
    (statement,) = [s for s in document["statements"] if s["id"].startswith("drillbook:exercise")]
    assert statement["id"] == f"drillbook:exercise-run:{run_id}"
    assert statement["verb"]["display"]["en"] == "failed"
    assert statement["object"]["id"] == "urn:drillbook:exercise:overfit-shuffled-pairs"
    assert statement["result"]["checks"][0]["status"] == "fail"
    assert statement["context"]["code"].endswith("# edited\n")
    assert len(statement["context"]["code_sha256"]) == 64 and "diff" in statement["context"]
    content = {k: v for k, v in statement.items() if k != "digest"}
    assert statement["digest"] == jcs_sha256(content)
    # The page shows it too, and the signed export verifies as a whole.
    page = anonymous.get("/portfolio/export.html").text
    assert f'id="exercise-run-{run_id}"' in page and "A check" in page
    export = anonymous.get("/portfolio/export.json").content
    verified = anonymous.post(
        "/portfolio/verify", files={"file": ("export.json", export, "application/json")}
    )
    assert 'id="verify-intact"' in verified.text, verified.text[-1500:]


def test_the_html_export_says_a_runs_status_in_the_pages_words(anonymous: TestClient) -> None:
    """A run that showed its planted bug ended as it should: the pages say "finished", and the
    export says what the pages say, not the stored "succeeded"."""
    room = classroom(anonymous)
    page = room.clients["learner-a"].get("/portfolio/export.html").text
    headings = re.findall(r"<h4>Attempt \d+ — <span class=\"status\">([^<]*)</span>", page)
    assert headings, "the export lists the learner's attempts"
    assert "succeeded" not in headings
    assert set(headings) <= set(RUN_STATUS_WORDS.values())
