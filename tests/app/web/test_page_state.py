"""Pages that stay true as runs move on: the live panel survives a reload, a waiting run says
where it stands in the queue, the submit section unlocks when a run ends, a resubmission starts
from the last version; and what a visitor may read before registering."""

import re
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlmodel import Session

from app.grading.models import Decision
from app.models.time import utcnow
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import (
    add_attempt,
    add_review,
    add_submission,
    add_unfinished_attempt,
    add_user,
    engine_of,
)

HTMX = {"HX-Request": "true"}
DRILL_PAGE = "/drills/overfit-one-batch"
DRAFT = "Labels *moved* between examples."


def learner_id(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def scheduler_of(client: TestClient) -> str:
    # Unfinished attempts naming this app's scheduler are left alone by its housekeeping.
    return str(client.app.state.runner.scheduler_id)  # type: ignore[attr-defined]


def test_a_reload_during_a_run_shows_its_live_panel(client: TestClient) -> None:
    engine = engine_of(client)
    attempt_id = add_unfinished_attempt(
        engine, learner_id(client), status=AttemptStatus.running, scheduler_id=scheduler_of(client)
    )
    page = client.get(DRILL_PAGE).text
    panel = re.search(r'<section id="run-panel"[^>]*>', page)
    assert panel and f'data-attempt="{attempt_id}"' in panel.group(0)
    assert f'sse-connect="/api/attempts/{attempt_id}/events?after=' in panel.group(0)
    assert "running in a worker process" in page


def test_a_finished_run_leaves_the_drill_page_empty_and_ready(client: TestClient) -> None:
    add_attempt(engine_of(client), learner_id(client), fixed=True)
    page = client.get(DRILL_PAGE).text
    assert '<section id="run-panel" class="panel empty">' in page


def test_a_waiting_run_says_how_many_runs_are_ahead_of_it(client: TestClient) -> None:
    engine = engine_of(client)
    scheduler = scheduler_of(client)
    other = add_user(engine, "someone-else")
    ahead = [add_unfinished_attempt(engine, other, scheduler_id=scheduler) for _ in range(2)]
    mine = add_unfinished_attempt(engine, learner_id(client), scheduler_id=scheduler)
    panel = client.get(f"/attempts/{mine}/panel", headers=HTMX).text
    assert "Waiting for a free worker" in panel and "2 runs are ahead of yours" in panel
    assert "running in a worker" not in panel
    # The line polls while the run waits, and follows the stream's status events.
    wait = re.search(r'<p class="hint run-wait"[^>]*>', panel)
    assert wait and 'hx-trigger="sse:status, every 2s"' in wait.group(0)
    # The runs ahead end: its place moves up.
    with Session(engine) as session:
        for attempt_id in ahead:
            row = session.get(Attempt, attempt_id)
            assert row is not None
            row.status = AttemptStatus.cancelled
            session.add(row)
        session.commit()
    line = client.get(f"/attempts/{mine}/wait", headers=HTMX).text
    assert "yours is the next run to start" in line


def test_a_run_held_back_for_its_learners_share_says_so(client: TestClient) -> None:
    """A learner whose runs had both workers for most of the last minute while another learner
    ran: their next run is held back (app/runs/fair_share.py), and its line says why, not "next"."""
    engine = engine_of(client)
    me, other = learner_id(client), add_user(engine, "someone-else")
    now = utcnow()
    with Session(engine) as session:
        for who, seconds in ((me, 59), (me, 59), (other, 1)):
            session.add(
                Attempt(
                    learner_id=who, drill_slug="overfit-one-batch", drill_version="1",
                    hypothesis="fits", prediction_text="", knobs={}, seed=0, command="",
                    status=AttemptStatus.succeeded, scheduler_id="an-earlier-scheduler",
                    created_at=now - timedelta(seconds=seconds),
                    started_at=now - timedelta(seconds=seconds), finished_at=now,
                )
            )  # fmt: skip
        session.commit()
    held = add_unfinished_attempt(engine, me, scheduler_id=None)
    line = client.get(f"/attempts/{held}/wait", headers=HTMX).text
    assert "Held back for now" in line and "share of the workers" in line, line
    assert "next run to start" not in line
    with Session(engine) as session:
        row = session.get(Attempt, held)
        assert row is not None and row.scheduler_id is None  # still held: the line was true


def test_a_running_run_no_longer_polls_for_its_place(client: TestClient) -> None:
    engine = engine_of(client)
    running = add_unfinished_attempt(
        engine, learner_id(client), status=AttemptStatus.running, scheduler_id=scheduler_of(client)
    )
    line = client.get(f"/attempts/{running}/wait", headers=HTMX).text
    assert "running in a worker process" in line and "every 2s" not in line


def test_the_submit_section_follows_the_runs_until_it_holds_a_form(client: TestClient) -> None:
    engine = engine_of(client)
    me = learner_id(client)
    add_attempt(engine, me, fixed=False)
    page = client.get(DRILL_PAGE).text
    section = re.search(r'<section class="card submit-evidence"[^>]*>', page, re.S)
    assert section and 'hx-trigger="attempts-changed from:body"' in section.group(0)
    assert "you need at least one run that shows the failure" in page
    # A fixed run ends: the refreshed section now holds the form.
    fixed = add_attempt(engine, me, fixed=True)
    refreshed = client.get(f"{DRILL_PAGE}/submit-evidence", headers=HTMX).text
    assert 'name="fixed_attempt_id"' in refreshed
    assert f'<option value="{fixed}"' in refreshed
    opening = re.search(r'<section class="card submit-evidence"[^>]*>', refreshed, re.S)
    assert opening and "hx-get" not in opening.group(0)  # the typed text is never replaced


def test_the_run_pickers_refresh_and_keep_what_was_picked(client: TestClient) -> None:
    engine = engine_of(client)
    me = learner_id(client)
    failed = add_attempt(engine, me, fixed=False)
    add_attempt(engine, me, fixed=False)
    add_attempt(engine, me, fixed=True)
    newest_fixed = add_attempt(engine, me, fixed=True)
    pickers = client.get(
        f"{DRILL_PAGE}/submit-runs",
        params={"failed_attempt_id": str(failed), "fixed_attempt_id": str(newest_fixed)},
        headers=HTMX,
    ).text
    assert re.search(rf'<option value="{failed}"\s+selected', pickers)
    assert re.search(rf'<option value="{newest_fixed}"\s+selected', pickers)
    assert pickers.count("selected") == 2
    assert 'hx-include="#failed-attempt, #fixed-attempt"' in pickers


def test_a_resubmission_starts_from_the_last_version_and_feedback_renders(
    client: TestClient,
) -> None:
    engine = engine_of(client)
    me = learner_id(client)
    failed, fixed = add_attempt(engine, me, fixed=False), add_attempt(engine, me, fixed=True)
    submission = add_submission(
        engine,
        me,
        failed,
        fixed,
        text="Labels *moved* between examples.",
        status="changes_requested",
    )
    instructor = add_user(engine, "ida")
    add_review(
        engine,
        submission,
        instructor,
        comment="Say **why** it settles at ln 4.",
        decision=Decision.changes_requested,
    )
    page = client.get(DRILL_PAGE).text
    for field in ("mechanism", "right_tool", "wrong_tool", "next_check"):
        box = re.search(rf'<textarea id="submit-{field}"[^>]*>([^<]*)</textarea>', page)
        assert box and box.group(1) == DRAFT
    assert "Say <strong>why</strong> it settles at ln 4." in page
    # The progress page quotes the comment as plain words, not Markdown source.
    progress = client.get("/progress").text
    assert "Say why it settles at ln 4." in progress and "**why**" not in progress
    assert "Resubmit" in page


def test_a_visitor_reads_a_drill_and_registering_returns_to_it(anonymous: TestClient) -> None:
    page = anonymous.get(DRILL_PAGE)
    assert page.status_code == 200
    text = page.text
    assert "Symptom:" in text and 'name="hypothesis"' in text and 'id="knob-bug"' in text
    assert 'id="run-button"' not in text and "hx-post" not in text
    assert 'id="attempt-history"' not in text and 'id="submit-evidence"' not in text
    assert 'href="/register?next=/drills/overfit-one-batch"' in text
    form = anonymous.get("/register?next=/drills/overfit-one-batch").text
    assert 'name="next" value="/drills/overfit-one-batch"' in form
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    registered = anonymous.post(
        "/register",
        data={
            "username": "vera-visitor",
            "display_name": "Vera",
            "password": "a long enough password",
            "password_again": "a long enough password",
            "next": "/drills/overfit-one-batch",
            "csrf_token": token.group(1),
        },
        follow_redirects=False,
    )
    assert registered.status_code == 303
    assert registered.headers["location"] == "/drills/overfit-one-batch"
    # Running still needs an account: a visitor's POST is sent to log in.


def test_registering_never_returns_to_another_site(anonymous: TestClient) -> None:
    form = anonymous.get("/register?next=//evil.example/x").text
    assert 'value="//evil.example/x"' not in form


def test_the_catalogue_shows_where_the_learner_stands_on_each_drill(client: TestClient) -> None:
    engine = engine_of(client)
    me = learner_id(client)
    add_attempt(engine, me, fixed=True)
    add_attempt(engine, me, fixed=False)
    page = client.get("/").text
    standing = re.search(
        r'<p class="standing" data-standing="overfit-one-batch">(.*?)</p>', page, re.S
    )
    assert standing and "attempted" in standing.group(1) and "2 runs" in standing.group(1)
    untouched = re.search(r'data-standing="break-the-graph">(.*?)</p>', page, re.S)
    assert untouched and "not started" in untouched.group(1) and "runs" not in untouched.group(1)
