"""CSRF: every state-changing route refuses a request without the session's token (403, nothing
changes); no GET changes anything."""

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.cases.models import CaseStage
from app.runs.models import Attempt, AttemptStatus
from app.runs.replay_models import Replay
from drills.exercises.registry import get_exercise
from drills.practice.items import all_items
from tests.app.factories import (
    CLASS_CODES,
    DRILL,
    EXERCISE,
    RUBRIC_KEYS,
    add_assignment,
    add_attempt,
    add_case_attempt,
    add_exercise_run,
    add_explanation,
    add_review,
    add_round,
    add_saved_comment,
    add_submission,
    add_unfinished_attempt,
    add_user,
    engine_of,
    fill,
    http_routes,
    signed_in,
    snapshot,
    two_cohorts,
    visitor,
)
from tests.app.revision_factories import (
    REVISION_FORM,
    add_case_review,
    add_revision,
    add_round_review,
)
from tests.conftest import PASSWORD, RUN_WAIT_S

HEADER = "X-CSRF-Token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
PRACTICE_ITEM = f"track:{all_items()[0].key}"
RUN_FORM = {
    "hypothesis": "fits",
    "prediction": "The loss goes to zero.",
    "knob.examples": "8",
    "knob.bug": "none",
    "knob.lr": "0.01",
    "knob.steps": "10",
    "seed": "0",
}
TEXTS = {
    "mechanism": "The labels were re-shuffled every step.",
    "right_tool": "Before a long run.",
    "wrong_tool": "To judge generalisation.",
    "next_check": "The data loader.",
}


@dataclass
class World:
    app: FastAPI
    engine: Engine
    clients: dict[str, TestClient]
    ids: dict[str, int]
    codes: dict[str, str]
    spare: list[TestClient] = field(default_factory=list)

    def fresh(self, username: str | None) -> TestClient:
        """A browser of its own (for cases that log in or out)."""
        client = visitor(self.app) if username is None else signed_in(self.app, username)
        self.spare.append(client)
        return client


@pytest.fixture
def world(anonymous: TestClient) -> Iterator[World]:
    engine = engine_of(anonymous)
    app: FastAPI = anonymous.app  # type: ignore[assignment]
    people = two_cohorts(app, engine)
    admin, i1, i2 = (people.users[k] for k in ("admin", "instructor", "other_instructor"))
    a, b = people.users["learner_a"], people.users["learner_b"]
    c1, c2 = people.cohorts["c1"], people.cohorts["c2"]
    waiting = add_user(engine, "learner-c")  # holds the queued runs the cancel cases cancel
    failed_a = add_attempt(engine, a, fixed=False)
    fixed_a = add_attempt(engine, a, fixed=True)
    add_explanation(engine, fixed_a, a, "It memorised the batch.")
    failed_b = add_attempt(engine, b, fixed=False)
    fixed_b = add_attempt(engine, b, fixed=True)
    reviewed_b = add_submission(engine, b, failed_b, fixed_b, status="changes_requested")
    add_review(engine, reviewed_b, i2, comment="Say why.", decision="changes_requested")
    pending_b = add_submission(engine, b, failed_b, fixed_b, version=2)
    # Queued with no task behind them (the cases cancel them); on this app's scheduler, so its
    # housekeeping leaves them alone. A learner of their own: learner A's runs start at once
    # (a learner's second unfinished run waits in the backlog, app/runs/fair_share.py).
    scheduler = app.state.runner.scheduler_id
    queued = [add_unfinished_attempt(engine, waiting, scheduler_id=scheduler) for _ in range(2)]
    # Learner A's case attempts, one per case route: revealed (reviewed by I1), still
    # diagnosing, and two under investigation (one runs an experiment, one takes the verdict).
    revealed_case, revealed_run = add_case_attempt(engine, a)
    diagnosing_case, _ = add_case_attempt(engine, a, stage=CaseStage.diagnosing, number=2)
    experimenting_case, _ = add_case_attempt(engine, a, stage=CaseStage.investigating, number=3)
    judged_case, _ = add_case_attempt(engine, a, stage=CaseStage.investigating, number=4)
    # One answered in code (a case whose causes name an exercise).
    code_case, _ = add_case_attempt(
        engine,
        a,
        stage=CaseStage.investigating,
        case_key="memorised-batch",  # not the case the open-a-case request opens
        cause="head-not-optimized",
    )
    # Learner A's curve rounds: one answered (its instructor reviews it), one to answer.
    answered_round = add_round(engine, a)
    open_round = add_round(engine, a, answered=False, number=2)
    # Revise and resubmit: a case and a round with changes asked for (learner A revises them),
    # and a case and a round whose revision 1 waits for I1's review.
    changes_case, _ = add_case_attempt(engine, a, number=5)
    add_case_review(engine, changes_case, i1, decision="changes_requested")
    revised_case, _ = add_case_attempt(engine, a, number=6)
    add_case_review(engine, revised_case, i1, decision="changes_requested")
    add_revision(engine, a, case_attempt_id=revised_case)
    changes_round = add_round(engine, a, number=3)
    add_round_review(engine, changes_round, i1, decision="changes_requested")
    revised_round = add_round(engine, a, number=4)
    add_round_review(engine, revised_round, i1, decision="changes_requested")
    add_revision(engine, a, round_id=revised_round)
    exercise_run = add_exercise_run(engine, a)
    saved_comment = add_saved_comment(engine, i1, "Name the state the bug changes.")
    # C1's assignments: one its instructor edits, one they remove.
    edited_assignment = add_assignment(engine, c1, i1, title="Week 1")
    removed_assignment = add_assignment(engine, c1, i1, title="Week 2")
    clients = {**people.clients, "learner_c": signed_in(app, "learner-c")}
    ids = {
        "admin": admin,
        "learner_a": a,
        "learner_b": b,
        "c1": c1,
        "c2": c2,
        "failed_a": failed_a,
        "fixed_a": fixed_a,
        "pending_b": pending_b,
        "queued_c": queued[0],
        "queued_c_api": queued[1],
        "revealed_case": revealed_case,
        "revealed_run": revealed_run,
        "diagnosing_case": diagnosing_case,
        "experimenting_case": experimenting_case,
        "judged_case": judged_case,
        "code_case": code_case,
        "answered_round": answered_round,
        "open_round": open_round,
        "changes_case": changes_case,
        "revised_case": revised_case,
        "changes_round": changes_round,
        "revised_round": revised_round,
        "exercise_run": exercise_run,
        "saved_comment": saved_comment,
        "edited_assignment": edited_assignment,
        "removed_assignment": removed_assignment,
    }
    world = World(app, engine, clients, ids, dict(CLASS_CODES))
    yield world
    with Session(engine) as session:
        for attempt_id in queued:  # no worker will ever end these
            attempt = session.get(Attempt, attempt_id)
            assert attempt is not None
            if not attempt.final:
                attempt.status = AttemptStatus.failed
                session.add(attempt)
        session.commit()
    wait_for_runs(engine)
    for client in [*clients.values(), *world.spare]:
        client.close()


def wait_for_runs(engine: Engine, timeout: float = RUN_WAIT_S, *, idle: Iterable[int] = ()) -> None:
    """Let every run (and replay) a test started finish, so none is cut off when the app
    stops and none writes during the next case's before/after comparison. `idle`: attempts
    with no task behind them (the cancel cases' placeholders)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with Session(engine) as session:
            busy: list[int | None] = list(
                session.exec(
                    select(Attempt.id).where(
                        col(Attempt.status).in_([AttemptStatus.queued, AttemptStatus.running]),
                        col(Attempt.id).not_in(list(idle)),
                    )
                ).all()
            )
            # A replay is a run too: it writes its verdict when it ends.
            busy += session.exec(select(Replay.attempt_id).where(Replay.status == "queued")).all()
        if not busy:
            return
        time.sleep(0.1)
    raise AssertionError(f"attempts {busy} still running after {timeout} s")


@dataclass
class Case:
    """One state-changing request with valid fields: accepted with the token, it changes state."""

    client: TestClient
    url: str
    success: int
    form: dict[str, str] | None = None
    json: dict[str, Any] | None = None
    # What else the request would change besides rows: a probe that must not move when refused.
    probe: Callable[[], object] = lambda: None
    # A multipart upload: (field -> (filename, content, media type)), sent with the form.
    files: dict[str, tuple[str, bytes, str]] | None = None
    # Checking an upload is a POST (it carries a file) that changes nothing: only its status shows
    # that the right token let it through.
    changes_state: bool = True


def session_probe(client: TestClient) -> Callable[[], object]:
    return lambda: client.get("/api/session").status_code


CASE_ROUTES = {
    ("POST", "/register"),
    ("POST", "/login"),
    ("POST", "/logout"),
    ("POST", "/drills/{slug}/attempts"),
    ("POST", "/attempts/{attempt_id}/explanation"),
    ("POST", "/attempts/{attempt_id}/replays"),
    ("POST", "/attempts/{attempt_id}/cancel"),
    ("POST", "/api/attempts/{attempt_id}/cancel"),
    ("POST", "/drills/{slug}/submissions"),
    ("POST", "/submissions/{submission_id}/reviews"),
    ("POST", "/cohorts"),
    ("POST", "/cohorts/join"),
    ("POST", "/admin/users/{user_id}/role"),
    ("POST", "/api/attempts"),
    ("POST", "/portfolio/verify"),
    ("POST", "/cases/{case_key}/attempts"),
    ("POST", "/practice/{key}/answer"),
    ("POST", "/practice/{key}/rating"),
    ("POST", "/cases/attempts/{case_attempt_id}/diagnosis"),
    ("POST", "/cases/attempts/{case_attempt_id}/experiments"),
    ("POST", "/cases/attempts/{case_attempt_id}/verdict"),
    ("POST", "/cases/attempts/{case_attempt_id}/code/{slug}"),
    ("POST", "/cases/attempts/{case_attempt_id}/review"),
    ("POST", "/cohorts/{cohort_id}/case-budget"),
    ("POST", "/cohorts/{cohort_id}/review-items"),
    ("POST", "/practice/rounds"),
    ("POST", "/practice/rounds/{round_id}/answer"),
    ("POST", "/practice/rounds/{round_id}/review"),
    ("POST", "/reviews/comments"),
    ("POST", "/practice/streak"),
    ("POST", "/reviews/comments/{comment_id}"),
    ("POST", "/cases/attempts/{case_attempt_id}/revisions"),
    ("POST", "/cases/attempts/{case_attempt_id}/revisions/{number}/review"),
    ("POST", "/practice/rounds/{round_id}/revisions"),
    ("POST", "/practice/rounds/{round_id}/revisions/{number}/review"),
    ("POST", "/exercises/{slug}/runs"),
    ("POST", "/api/exercises/{slug}/runs"),
    ("POST", "/exercises/{slug}/hints"),
    ("POST", "/api/exercises/{slug}/hints"),
    ("POST", "/exercises/{slug}/solution"),
    ("POST", "/api/exercises/{slug}/solution"),
    ("POST", "/exercises/{slug}/runs/{run_id}/comments"),
    ("POST", "/cohorts/{cohort_id}/assignments"),
    ("POST", "/assignments/{assignment_id}"),
    ("POST", "/assignments/{assignment_id}/delete"),
}


def cases(world: World) -> dict[tuple[str, str], Case]:
    c, ids = world.clients, world.ids
    newcomer, anonymous = world.fresh(None), world.fresh(None)
    leaving = world.fresh("learner-a")
    export = c["learner_a"].get("/portfolio/export.json").content
    review = {"decision": "accepted", "comment": "Clear."}
    review |= {f"score.{key}": "2" for key in RUBRIC_KEYS}
    review |= {f"comment.{key}": "ok" for key in RUBRIC_KEYS}
    register = {
        "username": "newcomer",
        "display_name": "New",
        "password": PASSWORD,
        "password_again": PASSWORD,
    }
    built = {
        ("POST", "/register"): Case(
            newcomer, "/register", 303, form=register, probe=session_probe(newcomer)
        ),
        ("POST", "/login"): Case(
            anonymous,
            "/login",
            303,
            form={"username": "learner-b", "password": PASSWORD},
            probe=session_probe(anonymous),
        ),
        ("POST", "/logout"): Case(leaving, "/logout", 303, form={}, probe=session_probe(leaving)),
        ("POST", "/drills/{slug}/attempts"): Case(
            c["learner_a"], f"/drills/{DRILL}/attempts", 303, form=RUN_FORM
        ),
        ("POST", "/attempts/{attempt_id}/explanation"): Case(
            c["learner_a"], f"/attempts/{ids['fixed_a']}/explanation", 200, form=TEXTS
        ),
        ("POST", "/attempts/{attempt_id}/replays"): Case(
            c["instructor"], f"/attempts/{ids['fixed_a']}/replays", 303, form={}
        ),
        ("POST", "/attempts/{attempt_id}/cancel"): Case(
            c["learner_c"], f"/attempts/{ids['queued_c']}/cancel", 303, form={}
        ),
        ("POST", "/api/attempts/{attempt_id}/cancel"): Case(
            c["learner_c"], f"/api/attempts/{ids['queued_c_api']}/cancel", 202, json={}
        ),
        ("POST", "/drills/{slug}/submissions"): Case(
            c["learner_a"],
            f"/drills/{DRILL}/submissions",
            303,
            form={
                "failed_attempt_id": str(ids["failed_a"]),
                "fixed_attempt_id": str(ids["fixed_a"]),
                **TEXTS,
            },
        ),
        ("POST", "/submissions/{submission_id}/reviews"): Case(
            c["other_instructor"], f"/submissions/{ids['pending_b']}/reviews", 303, form=review
        ),
        ("POST", "/cohorts"): Case(c["instructor"], "/cohorts", 303, form={"name": "Spring"}),
        ("POST", "/cohorts/join"): Case(
            c["learner_a"], "/cohorts/join", 303, form={"code": world.codes["c2"]}
        ),
        ("POST", "/admin/users/{user_id}/role"): Case(
            c["admin"], f"/admin/users/{ids['learner_b']}/role", 303, form={"role": "instructor"}
        ),
        ("POST", "/api/attempts"): Case(
            c["learner_a"],
            "/api/attempts",
            202,
            json={
                "drill": DRILL,
                "hypothesis": "fits",
                "prediction": "zero",
                "knobs": {"steps": 10},
            },
        ),
        ("POST", "/portfolio/verify"): Case(
            c["learner_a"],
            "/portfolio/verify",
            200,
            form={},
            files={"file": ("export.json", export, "application/json")},
            changes_state=False,
        ),
    }
    case_review = {"decision": "accepted", "comment": "Good test choice."}
    case_review |= {f"score.{key}": "2" for key in ("alternatives", "test_choice", "verification")}
    built |= {
        ("POST", "/cases/{case_key}/attempts"): Case(
            c["learner_a"], "/cases/a-suspicious-checkpoint/attempts", 303, form={}
        ),
        # Showing the model answer stores nothing: the answer is stored with the rating.
        ("POST", "/practice/{key}/answer"): Case(
            c["learner_a"],
            f"/practice/{PRACTICE_ITEM}/answer",
            200,
            form={"answer": "From memory.", "seen_reviews": "0"},
            changes_state=False,
        ),
        ("POST", "/practice/{key}/rating"): Case(
            c["learner_a"],
            f"/practice/{PRACTICE_ITEM}/rating",
            303,
            form={"answer": "From memory.", "rating": "good", "seen_reviews": "0"},
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/diagnosis"): Case(
            c["learner_a"],
            f"/cases/attempts/{ids['diagnosing_case']}/diagnosis",
            303,
            form={
                "leading": "cause-3",
                "first_test": "update-sizes",
                "intervention": "optimize every parameter",
                "confirmation": "the backbone moves",
            },
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/experiments"): Case(
            c["learner_a"],
            f"/cases/attempts/{ids['experimenting_case']}/experiments",
            303,
            form={"experiment": "update-sizes"},
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/verdict"): Case(
            c["learner_a"],
            f"/cases/attempts/{ids['judged_case']}/verdict",
            303,
            form={"cause": "cause-3", "fix": "optimize-all-parameters"},
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/code/{slug}"): Case(
            c["learner_a"],
            f"/cases/attempts/{ids['code_case']}/code/optimizer-new-head",
            303,
            form={"cause": "cause-3", "code": get_exercise("optimizer-new-head").starter},
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/review"): Case(
            c["instructor"], f"/cases/attempts/{ids['revealed_case']}/review", 303, form=case_review
        ),
        ("POST", "/cohorts/{cohort_id}/case-budget"): Case(
            c["instructor"], f"/cohorts/{ids['c1']}/case-budget", 303, form={"case_budget": "5"}
        ),
        ("POST", "/cohorts/{cohort_id}/review-items"): Case(
            c["instructor"],
            f"/cohorts/{ids['c1']}/review-items",
            303,
            form={"prompt": "Why overfit one batch?", "answer": "To check the wiring."},
        ),
        # Learner B has no open round: this draws one and starts its run (in a browser of its
        # own: the refusals try the other learner_b session's token).
        ("POST", "/practice/rounds"): Case(
            world.fresh("learner-b"), "/practice/rounds", 303, form={}
        ),
        ("POST", "/practice/rounds/{round_id}/answer"): Case(
            c["learner_a"],
            f"/practice/rounds/{ids['open_round']}/answer",
            303,
            form={
                "leading": "cause-3",
                "alternatives": "cause-2",
                "first_test": "update-sizes",
                "intervention": "optimize every parameter",
                "confirmation": "the backbone moves",
            },
        ),
        ("POST", "/practice/rounds/{round_id}/review"): Case(
            c["instructor"],
            f"/practice/rounds/{ids['answered_round']}/review",
            303,
            form=case_review,
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/revisions"): Case(
            c["learner_a"],
            f"/cases/attempts/{ids['changes_case']}/revisions",
            303,
            form=REVISION_FORM | {"number": "1"},
        ),
        ("POST", "/cases/attempts/{case_attempt_id}/revisions/{number}/review"): Case(
            c["instructor"],
            f"/cases/attempts/{ids['revised_case']}/revisions/1/review",
            303,
            form=case_review,
        ),
        ("POST", "/practice/rounds/{round_id}/revisions"): Case(
            c["learner_a"],
            f"/practice/rounds/{ids['changes_round']}/revisions",
            303,
            form=REVISION_FORM | {"number": "1"},
        ),
        ("POST", "/practice/rounds/{round_id}/revisions/{number}/review"): Case(
            c["instructor"],
            f"/practice/rounds/{ids['revised_round']}/revisions/1/review",
            303,
            form=case_review,
        ),
    }
    # An instructor's saved review comments: a new one, and an edit of one kept before.
    built |= {
        ("POST", "/reviews/comments"): Case(
            c["instructor"], "/reviews/comments", 303, form={"text": "Show the fixed run."}
        ),
        ("POST", "/reviews/comments/{comment_id}"): Case(
            c["instructor"],
            f"/reviews/comments/{ids['saved_comment']}",
            303,
            form={"text": "Name the tensor the bug changes."},
        ),
        # A learner hides their streak (a row of settings is written).
        ("POST", "/practice/streak"): Case(
            c["learner_a"], "/practice/streak", 303, form={"show": "no"}
        ),
    }
    # Exercises, in this order: the hint ladder's every rung taken earns the solution.
    code = "print('hello')\n"
    built |= {
        ("POST", "/exercises/{slug}/runs"): Case(
            c["learner_a"], f"/exercises/{EXERCISE}/runs", 303, form={"code": code}
        ),
        ("POST", "/api/exercises/{slug}/runs"): Case(
            c["learner_a"], f"/api/exercises/{EXERCISE}/runs", 202, json={"code": code}
        ),
        ("POST", "/exercises/{slug}/hints"): Case(
            c["learner_a"], f"/exercises/{EXERCISE}/hints", 303, form={}
        ),
        ("POST", "/api/exercises/{slug}/hints"): Case(
            c["learner_a"], f"/api/exercises/{EXERCISE}/hints", 200, json={"rung": 20}
        ),
        ("POST", "/exercises/{slug}/solution"): Case(
            c["learner_a"], f"/exercises/{EXERCISE}/solution", 303, form={}
        ),
        # Shown already by the form above: the API answers it again and changes nothing.
        ("POST", "/api/exercises/{slug}/solution"): Case(
            c["learner_a"],
            f"/api/exercises/{EXERCISE}/solution",
            200,
            json={},
            changes_state=False,
        ),
    }
    # Learner A's instructor comments on their run (a row the learner reads on it).
    built |= {
        ("POST", "/exercises/{slug}/runs/{run_id}/comments"): Case(
            c["instructor"],
            f"/exercises/{EXERCISE}/runs/{ids['exercise_run']}/comments",
            303,
            form={"body": "Which tensor does your fix change?"},
        ),
    }
    assignment = {"title": "Week 3", "due": "2026-12-18T17:00", "case:a-fresh-head": "on"}
    built |= {
        ("POST", "/cohorts/{cohort_id}/assignments"): Case(
            c["instructor"], f"/cohorts/{ids['c1']}/assignments", 303, form=assignment
        ),
        ("POST", "/assignments/{assignment_id}"): Case(
            c["instructor"],
            f"/assignments/{ids['edited_assignment']}",
            303,
            form=assignment | {"title": "Week 1, revised", "version": "1"},
        ),
        ("POST", "/assignments/{assignment_id}/delete"): Case(
            c["instructor"],
            f"/assignments/{ids['removed_assignment']}/delete",
            303,
            form={"version": "1"},
        ),
    }
    assert set(built) == CASE_ROUTES
    return built


def send(case: Case, *, header: str | None, field: str | None) -> Any:
    """Post the case with exactly this token header and form field (None: leave it out)."""
    saved = case.client.headers.pop(HEADER, None)
    try:
        headers = {HEADER: header} if header is not None else {}
        if case.json is not None:
            return case.client.post(
                case.url, json=case.json, headers=headers, follow_redirects=False
            )
        form = dict(case.form or {})
        if field is not None:
            form["csrf_token"] = field
        return case.client.post(
            case.url, data=form, files=case.files, headers=headers, follow_redirects=False
        )
    finally:
        if saved is not None:
            case.client.headers[HEADER] = saved


def token_of(client: TestClient) -> str:
    token = client.headers.get(HEADER)
    assert token, "every client here holds its session's token"
    return token


def test_every_state_changing_route_is_in_the_cases(anonymous: TestClient) -> None:
    routes = {(m, p) for m, p in http_routes(anonymous.app) if m not in SAFE_METHODS}  # type: ignore[arg-type]
    assert routes == CASE_ROUTES, (
        f"state-changing routes without a CSRF case: {sorted(routes - CASE_ROUTES)}; "
        f"cases for routes that are gone: {sorted(CASE_ROUTES - routes)}"
    )


def test_a_missing_or_wrong_token_gets_403_and_changes_nothing(world: World) -> None:
    someone_else = token_of(world.clients["learner_b"])  # a real token, of another session
    wrong: list[str] = []
    for (method, path), case in cases(world).items():
        own = token_of(case.client)
        refused: dict[str, dict[str, str | None]] = {
            "no token": {"header": None, "field": None},
            "a forged header": {"header": "forged-" + own[7:], "field": None},
            "another session's token as header": {"header": someone_else, "field": None},
            "an empty header": {"header": "", "field": None},
        }
        if case.json is None:
            refused |= {
                "a forged form field": {"header": None, "field": "forged-" + own[7:]},
                "another session's token as field": {"header": None, "field": someone_else},
            }
        for variant, token in refused.items():
            rows, probe = snapshot(world.engine), case.probe()
            response = send(case, **token)
            changed = snapshot(world.engine) != rows or case.probe() != probe
            if response.status_code != 403 or changed:
                wrong.append(
                    f"{method} {path} with {variant}: {response.status_code}, not 403"
                    + (", and it changed state" if changed else "")
                )
                break  # the first hole is enough; the state has moved on anyway
        else:
            check_control(case, own, wrong, f"{method} {path}", world)
    assert not wrong, "\n".join(wrong)


def check_control(case: Case, own: str, wrong: list[str], route: str, world: World) -> None:
    """The same request with the right token (as a plain form sends it) goes through, which
    shows that the refusals above were about the token and nothing else."""
    engine = world.engine
    rows, probe = snapshot(engine), case.probe()
    if case.json is not None:
        response = send(case, header=own, field=None)
    else:
        response = send(case, header=None, field=own)
    if response.status_code != case.success:
        wrong.append(f"{route} with the right token: {response.status_code}")
    elif case.changes_state and snapshot(engine) == rows and case.probe() == probe:
        wrong.append(f"{route} with the right token changed nothing")
    # A run it started writes on: let it end before the next snapshot.
    wait_for_runs(engine, idle=(world.ids["queued_c"], world.ids["queued_c_api"]))


def test_the_token_is_the_one_the_page_and_the_api_hand_out(client: TestClient) -> None:
    token = token_of(client)
    page = client.get(f"/drills/{DRILL}").text
    assert f'hx-headers=\'{{"X-CSRF-Token": "{token}"}}\'' in page
    assert f'name="csrf_token" value="{token}"' in page
    # Each session has its own token.
    other = visitor(client.app)  # type: ignore[arg-type]
    assert token_of(other) != token
    other.close()


def filled(world: World, path: str) -> str:
    """A route's path with ids of the world's rows (the admin may read each GET)."""
    ids = world.ids
    if "/code/" in path:  # a case answered in code: a case that offers it, and its exercise
        return f"/cases/attempts/{ids['code_case']}/code/optimizer-new-head"
    values = {
        "slug": EXERCISE if path.startswith(("/exercises/", "/api/exercises/")) else DRILL,
        "attempt_id": ids["fixed_a"],  # final: its event stream ends by itself
        "submission_id": ids["pending_b"],
        "cohort_id": ids["c1"],
        "user_id": ids["learner_a"],
        "case_key": "a-fresh-head",
        "key": PRACTICE_ITEM,
        "case_attempt_id": ids["revealed_case"],
        "case_run_id": ids["revealed_run"],  # final: its event stream ends by itself
        "round_id": ids["answered_round"],  # its run is final: the stream ends by itself
        "run_id": ids["exercise_run"],
        "comment_id": ids["saved_comment"],
        "assignment_id": ids["edited_assignment"],
        "number": 1,
    }
    return fill(path, **values)


def readable_urls(world: World) -> list[str]:
    """A URL for every GET route: each one the admin may read."""
    return [
        filled(world, path) for path in sorted(p for m, p in http_routes(world.app) if m == "GET")
    ]


def test_no_get_changes_state(world: World) -> None:
    ids = world.ids
    urls = readable_urls(world)
    readable = set(urls)
    urls += [
        "/openapi.json",
        "/login?next=/progress",
        "/progress?join=ok",
        f"/reviews?drill={DRILL}&learner=learner-a",
        f"/attempts/{ids['failed_a']}",
        f"/api/attempts/{ids['failed_a']}/events",
    ]
    # A GET to a state-changing URL (a link, an <img src>) must not do what the POST does.
    urls += [filled(world, p) for m, p in http_routes(world.app) if m not in SAFE_METHODS]
    changed: list[str] = []
    for actor in ("admin", "learner_a"):
        client = world.clients[actor]
        for url in urls:
            rows = snapshot(world.engine)
            response = client.get(url, follow_redirects=False)
            if response.status_code >= 500:
                changed.append(f"{actor} GET {url}: {response.status_code}")
            # The admin may read every page: each handler really ran, with valid ids.
            if actor == "admin" and url in readable and response.status_code != 200:
                changed.append(f"admin GET {url}: {response.status_code}, not 200")
            if snapshot(world.engine) != rows:
                changed.append(f"{actor} GET {url} changed the database")
        if client.get("/api/session").status_code != 200:
            changed.append(f"a GET logged {actor} out")
    assert not changed, "\n".join(changed)
