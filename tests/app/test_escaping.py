"""User text is escaped everywhere: hostile input goes into every field a user can fill, through
the real forms, and every page that shows it is parsed for live markup."""

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.accounts.models import Role
from tests.app.factories import (
    DRILL,
    EXPLANATION_FIELDS,
    RUBRIC_KEYS,
    add_attempt,
    add_user,
    engine_of,
    scan,
    signed_in,
    visitor,
)
from tests.conftest import PASSWORD


def hostile(label: str) -> str:
    """Every vector at once, after a label that says which field the text came from (fits the
    120 characters of a display name or a cohort name)."""
    return (
        f"{label} <script>alert(1)</script><img src=x onerror=alert(1)>"
        '"><svg onload=alert(1)>[x](javascript:alert(1))'
    )


MARKDOWN_EXTRA = (
    '\n\n[y](JaVaScRiPt:alert(1)) <a href="javascript:alert(1)">z</a> javascript:alert(1)'
    "\n\n<details open ontoggle=alert(1)>d</details> ![i](javascript:alert(1))"
)
EXPLAINED = {name: hostile(f"XSS-explain-{name}") for name in EXPLANATION_FIELDS}
SUBMITTED = {name: hostile(f"XSS-md-{name}") + MARKDOWN_EXTRA for name in EXPLANATION_FIELDS}
PREDICTION = hostile("XSS-prediction") + "\njavascript:alert(1)"


LEARNER_NAME = "XSS-learner-name"
EXPLAIN_LABELS = {f"XSS-explain-{name}" for name in EXPLANATION_FIELDS}
MARKDOWN_LABELS = {f"XSS-md-{name}" for name in EXPLANATION_FIELDS}
REVIEW_LABELS = {"XSS-review"} | {f"XSS-rubric-{key}" for key in RUBRIC_KEYS}


@dataclass
class World:
    app: FastAPI
    clients: dict[str, TestClient]
    ids: dict[str, int] = field(default_factory=dict)
    # what -> (HTML, labels it must show), pages kept along the way
    pages: dict[str, tuple[str, set[str]]] = field(default_factory=dict)


def location_id(response: Any) -> int:
    assert response.status_code == 303, response.text
    return int(response.headers["location"].rsplit("/", 1)[1])


@pytest.fixture
def world(anonymous: TestClient) -> Iterator[World]:
    """Hostile text in every field, put there through the forms wherever the form needs no
    real run (the attempts themselves are rows: a prediction is stored as typed)."""
    engine = engine_of(anonymous)
    app: FastAPI = anonymous.app  # type: ignore[assignment]
    add_user(engine, "admin", Role.admin, display_name=hostile("XSS-admin-name"))
    add_user(engine, "instructor-1", Role.instructor, display_name=hostile("XSS-instr-name"))
    # A spreadsheet formula as a display name, for the CSV export.
    add_user(engine, "sheet", display_name='=HYPERLINK("http://evil.example","open")')

    # Learner A registers through the form, with a hostile display name.
    learner = visitor(app)
    registered = learner.post(
        "/register",
        data={
            "username": "learner-a",
            "display_name": hostile("XSS-learner-name"),
            "password": PASSWORD,
            "password_again": PASSWORD,
            "csrf_token": learner.headers["X-CSRF-Token"],
        },
        follow_redirects=False,
    )
    assert registered.status_code == 303, registered.text
    learner.headers["X-CSRF-Token"] = learner.get("/api/session").json()["csrf_token"]
    clients = {
        "learner_a": learner,
        "instructor": signed_in(app, "instructor-1"),
        "admin": signed_in(app, "admin"),
        "sheet": signed_in(app, "sheet"),
    }
    world = World(app, clients)
    a = learner.get("/api/session").json()["user_id"]

    # The instructor names a cohort; A and "sheet" join it with its code.
    cohort = location_id(
        clients["instructor"].post(
            "/cohorts", data={"name": hostile("XSS-cohort")}, follow_redirects=False
        )
    )
    cohort_page = clients["instructor"].get(f"/cohorts/{cohort}").text
    code = re.search(r'id="join-code">([A-Z0-9]+)<', cohort_page)
    assert code is not None
    for joiner in ("learner_a", "sheet"):
        joined = clients[joiner].post(
            "/cohorts/join", data={"code": code.group(1)}, follow_redirects=False
        )
        assert joined.headers["location"] == "/progress?join=ok"

    failed = add_attempt(engine, a, fixed=False, prediction=PREDICTION)
    fixed = add_attempt(engine, a, fixed=True, prediction=PREDICTION)
    explained = learner.post(f"/attempts/{fixed}/explanation", data=EXPLAINED)
    assert explained.status_code == 200, explained.text
    evidence = {"failed_attempt_id": str(failed), "fixed_attempt_id": str(fixed)}
    v1 = location_id(
        learner.post(
            f"/drills/{DRILL}/submissions", data=evidence | SUBMITTED, follow_redirects=False
        )
    )
    review = {"decision": "changes_requested", "comment": hostile("XSS-review")}
    review |= {f"score.{key}": "1" for key in RUBRIC_KEYS}
    review |= {f"comment.{key}": hostile(f"XSS-rubric-{key}") for key in RUBRIC_KEYS}
    reviewed = clients["instructor"].post(
        f"/submissions/{v1}/reviews", data=review, follow_redirects=False
    )
    assert reviewed.status_code == 303, reviewed.text
    # With changes requested the drill page offers a resubmission, prefilled from the last
    # version (and the review's comment rendered as Markdown): keep that page before resubmitting.
    world.pages["drill page, resubmission form"] = (
        learner.get(f"/drills/{DRILL}").text,
        {"XSS-learner-name"} | MARKDOWN_LABELS | REVIEW_LABELS,
    )
    incomplete = SUBMITTED | {"next_check": ""}
    rejected = learner.post(f"/drills/{DRILL}/submissions", data=evidence | incomplete)
    assert rejected.status_code == 422, rejected.text
    world.pages["submission rejected"] = (
        rejected.text,
        {f"XSS-md-{name}" for name in ("mechanism", "right_tool", "wrong_tool")},
    )
    v2 = location_id(
        learner.post(
            f"/drills/{DRILL}/submissions", data=evidence | SUBMITTED, follow_redirects=False
        )
    )
    world.ids = {"a": a, "cohort": cohort, "failed": failed, "fixed": fixed, "v1": v1, "v2": v2}
    yield world
    for client in clients.values():
        client.close()


def pages(world: World) -> list[tuple[str, str, set[str]]]:
    """(actor, url, labels of the hostile fields the page must show as text)."""
    ids = world.ids
    submission = {"XSS-prediction", LEARNER_NAME} | MARKDOWN_LABELS | REVIEW_LABELS
    return [
        ("learner_a", f"/drills/{DRILL}", {LEARNER_NAME} | REVIEW_LABELS),
        ("learner_a", f"/drills/{DRILL}/history", set()),
        ("learner_a", f"/attempts/{ids['fixed']}", {"XSS-prediction"} | EXPLAIN_LABELS),
        ("learner_a", f"/attempts/{ids['fixed']}/panel", {"XSS-prediction"} | EXPLAIN_LABELS),
        ("learner_a", f"/attempts/{ids['failed']}", {"XSS-prediction", LEARNER_NAME}),
        ("instructor", f"/attempts/{ids['fixed']}", {"XSS-prediction", "XSS-instr-name"}),
        ("learner_a", f"/submissions/{ids['v1']}", submission),
        ("learner_a", f"/submissions/{ids['v2']}", submission),
        ("instructor", f"/submissions/{ids['v2']}", submission | {"XSS-instr-name"}),
        ("admin", f"/submissions/{ids['v2']}", submission | {"XSS-admin-name"}),
        ("instructor", "/reviews", {LEARNER_NAME, "XSS-instr-name"}),
        ("admin", "/reviews", {LEARNER_NAME, "XSS-admin-name"}),
        ("instructor", "/cohorts", {"XSS-cohort"}),
        ("instructor", f"/cohorts/{ids['cohort']}", {"XSS-cohort", LEARNER_NAME}),
        ("admin", f"/cohorts/{ids['cohort']}", {"XSS-cohort", LEARNER_NAME}),
        ("learner_a", "/progress", {"XSS-cohort", LEARNER_NAME}),
        ("admin", "/admin/users", {LEARNER_NAME, "XSS-instr-name", "XSS-admin-name"}),
        ("learner_a", "/", {LEARNER_NAME}),
    ]


def check(what: str, html: str, labels: set[str], wrong: list[str]) -> None:
    problems, text = scan(html)
    wrong.extend(f"{what}: {problem}" for problem in problems)
    unseen = {label for label in labels if label not in text}
    if unseen:
        wrong.append(f"{what}: does not show {sorted(unseen)} (so its escaping went untested)")
    # The hostile text is there, as text.
    if labels and "<script>alert(1)</script>" not in text:
        wrong.append(f"{what}: the hostile text is not shown as text")


def test_the_scanner_sees_live_markup() -> None:
    """The check the tests below rely on: it finds each kind of live markup."""
    page = (
        '<script src="/static/app.js"></script><p title="&lt;script&gt;">&lt;b&gt;</p>'
        "<script>alert(1)</script><script src=//evil.example/x.js></script>"
        '<img src=x onerror=alert(1)><svg onload=alert(1)></svg><p onclick="x">'
        '<a href=" JaVa&#x09;Script:alert(1)">a</a><form action="javascript:alert(1)">'
        '<div hx-on:click="alert(1)"></div>'
    )
    problems = "\n".join(scan(page)[0])
    for sign in (
        "inline script",
        "evil.example/x.js",
        "<img>",
        "<svg>",
        "'onerror'",
        "'onload'",
        "'onclick'",
        "href with a script URL",
        "action with a script URL",
        "'hx-on:click'",
    ):
        assert sign in problems, sign
    assert (
        scan('<script src="/static/app.js"></script><p title="&lt;script&gt;">&lt;b&gt;</p>')[0]
        == []
    )


def test_every_page_shows_hostile_user_text_as_text(world: World) -> None:
    wrong: list[str] = []
    for what, (html, labels) in world.pages.items():
        check(what, html, labels, wrong)
    for actor, url, labels in pages(world):
        response = world.clients[actor].get(url)
        assert response.status_code == 200, f"{actor} GET {url}: {response.status_code}"
        check(f"{actor} GET {url}", response.text, labels, wrong)
    assert not wrong, "\n".join(wrong)


def test_forms_echo_hostile_input_as_text(world: World) -> None:
    """A rejected form comes back with what was typed: escaped there too."""
    c, ids = world.clients, world.ids
    wrong: list[str] = []
    draft = EXPLAINED | {"next_check": ""}
    echoes = {
        "explanation rejected": (
            c["learner_a"].post(f"/attempts/{ids['fixed']}/explanation", data=draft),
            {f"XSS-explain-{name}" for name in ("mechanism", "right_tool", "wrong_tool")},
        ),
        "review rejected": (
            c["instructor"].post(
                f"/submissions/{ids['v2']}/reviews",
                data={"comment": hostile("XSS-review-draft")}
                | {f"comment.{key}": hostile(f"XSS-rubric-draft-{key}") for key in RUBRIC_KEYS},
            ),
            {"XSS-review-draft"} | {f"XSS-rubric-draft-{key}" for key in RUBRIC_KEYS},
        ),
    }
    newcomer = visitor(world.app)
    token = newcomer.headers["X-CSRF-Token"]
    echoes["registration rejected"] = (
        newcomer.post(
            "/register",
            data={
                "username": hostile("XSS-username"),
                "display_name": hostile("XSS-display-draft"),
                "password": PASSWORD,
                "password_again": PASSWORD,
                "csrf_token": token,
            },
        ),
        {"XSS-display-draft", "XSS-username"},
    )
    echoes["login rejected"] = (
        newcomer.post(
            "/login",
            data={"username": hostile("XSS-login"), "password": "wrong", "csrf_token": token},
        ),
        {"xss-login"},
    )
    next_target = '/"><script>alert(1)</script><img src=x onerror=alert(1)>'
    echoes["login page with a hostile next"] = (
        newcomer.get("/login", params={"next": next_target}),
        {"<script>alert(1)</script>"},
    )
    echoes["review queue with hostile filters"] = (
        c["instructor"].get("/reviews", params={"drill": next_target, "learner": next_target}),
        set(),
    )
    for what, (response, labels) in echoes.items():
        assert response.status_code in (200, 401, 422), f"{what}: {response.status_code}"
        check(what, response.text, labels, wrong)
    newcomer.close()
    assert not wrong, "\n".join(wrong)


def test_the_cohort_export_is_a_download_and_defuses_formulas(world: World) -> None:
    response = world.clients["instructor"].get(f"/cohorts/{world.ids['cohort']}/progress.csv")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.reader(io.StringIO(response.text)))
    names = {row[0]: row[1] for row in rows[1:]}
    assert names["learner-a"] == hostile("XSS-learner-name")  # as typed, for a spreadsheet
    assert names["sheet"] == "'" + '=HYPERLINK("http://evil.example","open")'
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
