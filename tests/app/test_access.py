"""Who reads what: every route that carries an id, walked by every kind of actor.

A learner reads only their own work, an instructor only the work of their cohorts' learners, an
admin everything. Someone else's record is answered exactly like a record that does not exist.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.accounts.models import Cohort, User
from app.assignments.models import Assignment
from app.cases.models import CaseAttempt, CaseRun
from app.grading.models import SavedComment, Submission
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt
from tests.app.factories import (
    DRILL,
    EXERCISE,
    RUBRIC_KEYS,
    add_assignment,
    add_attempt,
    add_case_attempt,
    add_exercise_run,
    add_round,
    add_saved_comment,
    add_submission,
    engine_of,
    exists,
    fill,
    http_routes,
    snapshot,
    two_cohorts,
    visitor,
)

ACTORS = ("anonymous", "learner_a", "learner_b", "other_instructor", "instructor", "admin")
OK, LOGIN, UNAUTHORIZED, FORBIDDEN, HIDDEN, CONFLICT, INVALID = 200, 303, 401, 403, 404, 409, 422

# (method, path) -> expected status for each actor, in the order of ACTORS. The records are
# learner A's (A is in cohort C1, run by "instructor"; B is in C2, run by "other_instructor").
# POSTs carry deliberately invalid fields: 422 proves that access was granted, and nothing
# changes.
READ_OWN_WORK = (LOGIN, OK, HIDDEN, HIDDEN, OK, OK)
MATRIX: dict[tuple[str, str], tuple[int, ...]] = {
    ("GET", "/attempts/{attempt_id}"): READ_OWN_WORK,
    ("GET", "/attempts/{attempt_id}/panel"): READ_OWN_WORK,
    ("GET", "/attempts/{attempt_id}/wait"): READ_OWN_WORK,
    ("GET", "/attempts/{attempt_id}/replays"): READ_OWN_WORK,
    # A replay is asked for by the learner's instructor (or an admin), never by the learner:
    # it is the check of their claim. Allowed requests really start one (see REPLAYERS).
    # (Sent as htmx: an anonymous htmx request gets 401 with an HX-Redirect to the login.)
    ("POST", "/attempts/{attempt_id}/replays"): (
        UNAUTHORIZED, FORBIDDEN, HIDDEN, HIDDEN, OK, OK,
    ),
    # Only the learner who ran it explains it; readers who are not its owner get 403.
    ("POST", "/attempts/{attempt_id}/explanation"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    # Only the learner who ran it cancels it; these runs have ended, so their owner gets 409.
    ("POST", "/attempts/{attempt_id}/cancel"): (
        LOGIN, CONFLICT, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/api/attempts/{attempt_id}/cancel"): (
        UNAUTHORIZED, CONFLICT, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("GET", "/submissions/{submission_id}"): READ_OWN_WORK,
    # The learner reads their submission but cannot review it.
    ("POST", "/submissions/{submission_id}/reviews"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("GET", "/cohorts/{cohort_id}"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/cohorts/{cohort_id}/progress.csv"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    # A cohort's portfolios: its instructor and admins only.
    ("GET", "/cohorts/{cohort_id}/export.zip"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    ("POST", "/admin/users/{user_id}/role"): (
        LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, INVALID,
    ),
    ("GET", "/api/attempts/{attempt_id}"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/api/attempts/{attempt_id}/events"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    # Cases: the learner works them; their instructor (and admins) read and review them.
    ("GET", "/cases/attempts/{case_attempt_id}"): READ_OWN_WORK,
    ("GET", "/cases/attempts/{case_attempt_id}/body"): READ_OWN_WORK,
    ("GET", "/api/cases/attempts/{case_attempt_id}"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/cases/runs/{case_run_id}/events"): READ_OWN_WORK,
    ("POST", "/cases/attempts/{case_attempt_id}/diagnosis"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/cases/attempts/{case_attempt_id}/experiments"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/cases/attempts/{case_attempt_id}/verdict"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    # A case answered in code (app/exercises/case_verdict_routes.py): its instructor reads the
    # page (without the form); only the learner posts it.
    ("GET", "/cases/attempts/{case_attempt_id}/code/{slug}"): READ_OWN_WORK,
    ("POST", "/cases/attempts/{case_attempt_id}/code/{slug}"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/cases/attempts/{case_attempt_id}/review"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    # Revise and resubmit: only the learner revises (these forms are invalid: 422); only their
    # instructor (or an admin) reviews a revision (the review form is checked before the
    # revision is looked for, so its 422 shows that access was granted).
    ("POST", "/cases/attempts/{case_attempt_id}/revisions"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/cases/attempts/{case_attempt_id}/revisions/{number}/review"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("POST", "/cohorts/{cohort_id}/case-budget"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, INVALID, INVALID),
    # Curve rounds, as cases: this one is answered, so its learner's second answer is a 409.
    ("GET", "/practice/rounds/{round_id}"): READ_OWN_WORK,
    ("GET", "/practice/rounds/{round_id}/body"): READ_OWN_WORK,
    ("GET", "/practice/rounds/{round_id}/events"): READ_OWN_WORK,
    ("POST", "/practice/rounds/{round_id}/answer"): (
        LOGIN, CONFLICT, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/practice/rounds/{round_id}/review"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("POST", "/practice/rounds/{round_id}/revisions"): (
        LOGIN, INVALID, HIDDEN, HIDDEN, FORBIDDEN, FORBIDDEN,
    ),
    ("POST", "/practice/rounds/{round_id}/revisions/{number}/review"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("POST", "/cohorts/{cohort_id}/review-items"): (
        LOGIN, HIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    # A saved review comment is its instructor's alone (instructor-1 owns this one): no other
    # instructor, nor an admin, reaches it; a learner has no list.
    ("POST", "/reviews/comments/{comment_id}"): (
        LOGIN, FORBIDDEN, FORBIDDEN, HIDDEN, INVALID, HIDDEN,
    ),
    # Exercise runs: their learner's own work, read by their instructor as any run is.
    ("GET", "/exercises/{slug}/runs/{run_id}"): READ_OWN_WORK,
    ("GET", "/exercises/{slug}/runs/{run_id}/panel"): READ_OWN_WORK,
    # The learner's instructor (or an admin) comments on a run; its learner only reads them.
    ("POST", "/exercises/{slug}/runs/{run_id}/comments"): (
        LOGIN, FORBIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("GET", "/api/exercises/runs/{run_id}"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/api/exercises/runs/{run_id}/events"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/api/exercises/runs/{run_id}/code"): (UNAUTHORIZED, OK, HIDDEN, HIDDEN, OK, OK),
    # Assignments and the gradebook: the cohort's instructor and admins only. A learner reads
    # their own on /assignments, which carries no id.
    ("GET", "/cohorts/{cohort_id}/assignments"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    ("POST", "/cohorts/{cohort_id}/assignments"): (
        LOGIN, HIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
    ("GET", "/cohorts/{cohort_id}/gradebook.csv"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    ("GET", "/assignments/{assignment_id}/edit"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, OK, OK),
    ("POST", "/assignments/{assignment_id}"): (LOGIN, HIDDEN, HIDDEN, HIDDEN, INVALID, INVALID),
    ("POST", "/assignments/{assignment_id}/delete"): (
        LOGIN, HIDDEN, HIDDEN, HIDDEN, INVALID, INVALID,
    ),
}  # fmt: skip

# The exercise a path's {slug} names: the world's case offers its own drill's exercise.
CASE_EXERCISE = "optimizer-new-head"


def slug_for(path: str) -> str:
    return CASE_EXERCISE if path.startswith("/cases/") else EXERCISE


INVALID_FORMS = {
    "/attempts/{attempt_id}/cancel": {},
    "/api/attempts/{attempt_id}/cancel": {},
    "/attempts/{attempt_id}/explanation": {"mechanism": ""},
    "/submissions/{submission_id}/reviews": {"decision": "maybe"},
    "/admin/users/{user_id}/role": {"role": "emperor"},
    "/cases/attempts/{case_attempt_id}/diagnosis": {"leading": "cause-99"},
    "/cases/attempts/{case_attempt_id}/experiments": {"experiment": "no-such-test"},
    "/cases/attempts/{case_attempt_id}/verdict": {"cause": "cause-99"},
    "/cases/attempts/{case_attempt_id}/code/{slug}": {"cause": "cause-99", "code": "pass"},
    "/cases/attempts/{case_attempt_id}/review": {"decision": "maybe"},
    "/cohorts/{cohort_id}/case-budget": {"case_budget": "99"},
    "/cohorts/{cohort_id}/review-items": {"prompt": "", "answer": ""},
    "/practice/rounds/{round_id}/answer": {"leading": "cause-99"},
    "/practice/rounds/{round_id}/review": {"decision": "maybe"},
    "/reviews/comments/{comment_id}": {"text": ""},
    "/exercises/{slug}/runs/{run_id}/comments": {"body": " "},
    "/cohorts/{cohort_id}/assignments": {"title": ""},
    "/assignments/{assignment_id}": {"title": ""},
    "/assignments/{assignment_id}/delete": {},  # no version: 422, and nothing removed
    "/cases/attempts/{case_attempt_id}/revisions": {"number": "one"},
    "/cases/attempts/{case_attempt_id}/revisions/{number}/review": {"decision": "maybe"},
    "/practice/rounds/{round_id}/revisions": {"number": "one"},
    "/practice/rounds/{round_id}/revisions/{number}/review": {"decision": "maybe"},
}
MODELS = {
    "attempt_id": Attempt,
    "submission_id": Submission,
    "cohort_id": Cohort,
    "user_id": User,
    "case_attempt_id": CaseAttempt,
    "case_run_id": CaseRun,
    "round_id": DiagnosisRound,
    "run_id": Attempt,
    "comment_id": SavedComment,
    "assignment_id": Assignment,
}


@dataclass
class World:
    app: FastAPI
    clients: dict[str, TestClient]
    ids: dict[str, list[int]]  # path parameter -> learner A's records (or C1, or A's user id)
    users: dict[str, int]
    cohorts: dict[str, int]


@pytest.fixture
def world(anonymous: TestClient) -> Iterator[World]:
    """Admin; I1 runs C1 with learner A; I2 runs C2 with learner B; A has a failed and a fixed
    attempt and a pending submission; B has a failed and a fixed attempt."""
    engine = engine_of(anonymous)
    app: FastAPI = anonymous.app  # type: ignore[assignment]
    people = two_cohorts(app, engine)
    users, cohorts = people.users, people.cohorts
    failed_a = add_attempt(engine, users["learner_a"], fixed=False)
    fixed_a = add_attempt(engine, users["learner_a"], fixed=True)
    add_attempt(engine, users["learner_b"], fixed=False)
    add_attempt(engine, users["learner_b"], fixed=True)
    submission_a = add_submission(engine, users["learner_a"], failed_a, fixed_a)
    # A case that offers a code verdict (its code page is one of the case routes).
    case_attempt_a, case_run_a = add_case_attempt(
        engine, users["learner_a"], case_key="a-suspicious-checkpoint", cause="head-not-optimized"
    )
    round_a = add_round(engine, users["learner_a"])
    exercise_run_a = add_exercise_run(engine, users["learner_a"])
    comment = add_saved_comment(engine, users["instructor"], "Name the state the bug changes.")
    assignment_c1 = add_assignment(engine, cohorts["c1"], users["instructor"])
    clients = {"anonymous": visitor(app), **people.clients}
    ids = {
        "attempt_id": [failed_a, fixed_a],
        "submission_id": [submission_a],
        "cohort_id": [cohorts["c1"]],
        "user_id": [users["learner_a"]],
        "case_attempt_id": [case_attempt_a],
        "case_run_id": [case_run_a],
        "round_id": [round_a],
        "run_id": [exercise_run_a],
        "comment_id": [comment],
        "assignment_id": [assignment_c1],
    }
    yield World(app=app, clients=clients, ids=ids, users=users, cohorts=cohorts)
    for client in clients.values():
        client.close()


def request(client: TestClient, method: str, path: str, url: str) -> Any:
    if method == "GET":
        return client.get(url, follow_redirects=False)
    # A replay takes no fields; its allowed requests (htmx, so 200 rather than a redirect) start
    # one, which the matrix test counts.
    if path == "/attempts/{attempt_id}/replays":
        return client.post(url, headers={"HX-Request": "true"}, follow_redirects=False)
    return client.post(url, data=INVALID_FORMS[path], follow_redirects=False)


def id_parameter(path: str) -> str:
    match = re.search(r"{(\w+_id)}", path)
    assert match is not None
    return match.group(1)


def missing_like(engine: object, model: object, row_id: int) -> int:
    """An id with as many digits as `row_id` that no row has, so the two 404s can be compared
    byte for byte once the id is replaced."""
    missing = int("9" * len(str(row_id)))
    assert not exists(engine, model, missing)  # type: ignore[arg-type]
    return missing


STYLE_NONCE = re.compile(r"'nonce-[A-Za-z0-9_-]+'")


def fingerprint(response: Any, row_id: int) -> tuple[object, ...]:
    """Status, headers and body, the id replaced where the answer names it ("No attempt 12."):
    a page has other digits of its own (initial-scale=1) that must stay."""
    # Content-Length left out: a compressed body's length follows the id's digits (the body
    # itself, with the id replaced, is compared below).
    # The style nonce is new on every response (app/security/headers.py): compared as a name.
    headers = sorted(
        (k, STYLE_NONCE.sub("'nonce-<per request>'", v))
        for k, v in response.headers.items()
        if k not in ("set-cookie", "content-length")
    )
    body = re.sub(rf"(No [a-z ]+ ){row_id}\.", r"\1<id>.", response.text)
    return response.status_code, headers, body


def test_the_matrix_covers_every_route_that_carries_an_id(anonymous: TestClient) -> None:
    routes = {
        (method, path)
        for method, path in http_routes(anonymous.app)  # type: ignore[arg-type]
        if re.search(r"{\w+_id}", path)
    }
    assert routes == set(MATRIX), (
        f"id-bearing routes missing from MATRIX: {sorted(routes - set(MATRIX))}; "
        f"in MATRIX but gone from the app: {sorted(set(MATRIX) - routes)}"
    )


def test_every_actor_gets_exactly_the_status_the_matrix_says(world: World) -> None:
    engine = world.app.state.engine
    before = snapshot(engine)
    wrong: list[str] = []
    for (method, path), expected in MATRIX.items():
        parameter = id_parameter(path)
        for row_id in world.ids[parameter]:
            url = fill(path, slug=slug_for(path), number=1, **{parameter: row_id})
            for actor, status in zip(ACTORS, expected, strict=True):
                client = world.clients[actor]
                response = request(client, method, path, url)
                if response.status_code != status:
                    wrong.append(f"{actor} {method} {url}: {response.status_code}, not {status}")
                    continue
                if status == LOGIN:
                    location = response.headers["location"]
                    if not location.startswith("/login"):
                        wrong.append(f"{actor} {method} {url}: redirected to {location}")
                if status == HIDDEN:
                    # Indistinguishable from a record that does not exist.
                    missing = missing_like(engine, MODELS[parameter], row_id)
                    absent_url = fill(path, slug=slug_for(path), number=1, **{parameter: missing})
                    absent = request(client, method, path, absent_url)
                    if fingerprint(response, row_id) != fingerprint(absent, missing):
                        wrong.append(
                            f"{actor} {method} {url}: its 404 differs from a missing id's: "
                            f"{response.text!r} vs {absent.text!r}"
                        )
    assert not wrong, "\n".join(wrong)
    # Reading, and being refused, changed nothing; the only new rows are the replays that the
    # instructor and the admin were allowed to start, one per attempt each.
    after = snapshot(engine)
    replays = after.pop("replay")
    assert len(replays) - len(before.pop("replay")) == 2 * len(world.ids["attempt_id"])
    assert after == before


def test_an_api_client_gets_401_not_a_redirect(world: World) -> None:
    anonymous = world.clients["anonymous"]
    attempt_id = world.ids["attempt_id"][0]
    response = anonymous.get(f"/api/attempts/{attempt_id}", follow_redirects=False)
    assert response.status_code == UNAUTHORIZED and "location" not in response.headers
    page = anonymous.get(f"/attempts/{attempt_id}", follow_redirects=False)
    assert page.headers["location"] == f"/login?next=/attempts/{attempt_id}"
    # htmx cannot follow a 303 into a swap: it gets 401 and an HX-Redirect to the login page.
    htmx = anonymous.get(
        f"/attempts/{attempt_id}/panel", headers={"HX-Request": "true"}, follow_redirects=False
    )
    assert htmx.status_code == UNAUTHORIZED
    assert htmx.headers["HX-Redirect"].startswith("/login")


def test_lists_show_each_actor_only_the_work_they_may_read(world: World) -> None:
    clients = world.clients
    submission_id = world.ids["submission_id"][0]
    submission_link = f'href="/submissions/{submission_id}"'
    # The review queue: the cohort's instructor and the admin see A's pending submission.
    assert submission_link in clients["instructor"].get("/reviews").text
    assert submission_link in clients["admin"].get("/reviews").text
    other_queue = clients["other_instructor"].get("/reviews?learner=learner-a").text
    assert submission_link not in other_queue and "Learner-A" not in other_queue
    assert clients["learner_a"].get("/reviews").status_code == FORBIDDEN
    # Cohort lists.
    c1_link = f'href="/cohorts/{world.cohorts["c1"]}"'
    c2_link = f'href="/cohorts/{world.cohorts["c2"]}"'
    assert c1_link in clients["instructor"].get("/cohorts").text
    assert c1_link not in clients["other_instructor"].get("/cohorts").text
    admin_cohorts = clients["admin"].get("/cohorts").text
    assert c1_link in admin_cohorts and c2_link in admin_cohorts
    assert clients["learner_a"].get("/cohorts").status_code == FORBIDDEN
    assert clients["learner_a"].get("/admin/users").status_code == FORBIDDEN
    assert clients["instructor"].get("/admin/users").status_code == FORBIDDEN
    # A learner's drill page and history list only their own attempts.
    for learner, other in (("learner_a", "learner_b"), ("learner_b", "learner_a")):
        page = clients[learner].get(f"/drills/{DRILL}").text
        history = clients[learner].get(f"/drills/{DRILL}/history").text
        own = re.findall(r'href="/attempts/(\d+)"', page + history)
        assert own, f"{learner} sees none of their own attempts"
        for attempt_id in own:
            assert clients[learner].get(f"/api/attempts/{attempt_id}").status_code == OK
            assert clients[other].get(f"/api/attempts/{attempt_id}").status_code == HIDDEN


def test_a_learner_cannot_submit_someone_elses_attempts(world: World) -> None:
    engine = world.app.state.engine
    failed_a, fixed_a = world.ids["attempt_id"]
    before = snapshot(engine)
    response = world.clients["learner_b"].post(
        f"/drills/{DRILL}/submissions",
        data={
            "failed_attempt_id": str(failed_a),
            "fixed_attempt_id": str(fixed_a),
            "mechanism": "m",
            "right_tool": "r",
            "wrong_tool": "w",
            "next_check": "n",
        },
        follow_redirects=False,
    )
    assert response.status_code == INVALID
    assert "pick one of your own attempts" in response.text
    assert snapshot(engine) == before


def test_a_demoted_instructor_loses_their_cohorts_and_reviews_at_once(world: World) -> None:
    """Every check reads the current role: the cohort still names its old instructor, but an
    instructor made a learner reads, exports and reviews none of it any more."""
    engine = world.app.state.engine
    instructor = world.clients["instructor"]
    cohort_id, submission_id = world.cohorts["c1"], world.ids["submission_id"][0]
    attempt_id = world.ids["attempt_id"][0]
    readable = [
        f"/cohorts/{cohort_id}",
        f"/cohorts/{cohort_id}/progress.csv",
        f"/cohorts/{cohort_id}/export.zip",
        f"/submissions/{submission_id}",
        f"/attempts/{attempt_id}",
        f"/api/attempts/{attempt_id}",
    ]
    assert [instructor.get(url).status_code for url in readable] == [OK] * len(readable)

    demoted = world.clients["admin"].post(
        f"/admin/users/{world.users['instructor']}/role",
        data={"role": "learner"},
        follow_redirects=False,
    )
    assert demoted.status_code == 303
    before = snapshot(engine)
    refused = {url: instructor.get(url, follow_redirects=False).status_code for url in readable}
    assert refused == dict.fromkeys(readable, HIDDEN)
    # Like any cohort they cannot manage: the same 404 as a cohort that does not exist.
    missing = missing_like(engine, Cohort, cohort_id)
    assert fingerprint(instructor.get(f"/cohorts/{cohort_id}"), cohort_id) == fingerprint(
        instructor.get(f"/cohorts/{missing}"), missing
    )
    assert instructor.get("/cohorts").status_code == FORBIDDEN
    assert instructor.get("/reviews").status_code == FORBIDDEN
    review = {f"score.{key}": "2" for key in RUBRIC_KEYS} | {"decision": "accepted"}
    decided = instructor.post(
        f"/submissions/{submission_id}/reviews", data=review, follow_redirects=False
    )
    assert decided.status_code == HIDDEN
    replay = instructor.post(
        f"/attempts/{attempt_id}/replays", headers={"HX-Request": "true"}, follow_redirects=False
    )
    assert replay.status_code == HIDDEN
    assert snapshot(engine) == before


# Ids no row can have: past SQLite's and PostgreSQL's signed 64 bits (the driver overflowed on
# them), negative, zero.
OUT_OF_RANGE = (2**63, 2**64, 10**30, -1, 0)


def test_an_id_out_of_range_is_refused_by_name_on_every_id_route(world: World) -> None:
    """Never a 500: the logged-in actors get 422 naming the path parameter (or the 403 their
    role gets before any id is read); the anonymous one is sent to log in first."""
    wrong: list[str] = []
    for method, path in MATRIX:
        parameter = id_parameter(path)
        for value in OUT_OF_RANGE:
            url = fill(path, slug=slug_for(path), number=1, **{parameter: value})
            for actor in ("anonymous", "learner_a", "instructor", "admin"):
                response = request(world.clients[actor], method, path, url)
                status = response.status_code
                if actor == "anonymous":
                    ok = status in (LOGIN, UNAUTHORIZED)
                elif status == FORBIDDEN:
                    ok = actor != "admin" and "Only" in response.text
                else:
                    ok = status == INVALID and parameter in response.text
                if not ok:
                    wrong.append(f"{actor} {method} {url}: {status} {response.text[:200]!r}")
    assert not wrong, "\n".join(wrong)
