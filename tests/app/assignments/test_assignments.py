"""Assignments (issue 30, instructor tooling): an instructor sets a cohort a set of drills, cases,
curve rounds and exercises with a due date; learners see each item's state; work after the due
date is marked late, not refused; the cohort page sums it up one row per learner."""

import functools
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.accounts.models import Role
from app.assignments import service
from app.assignments.models import Assignment
from app.core.config import Settings
from app.main import create_app
from app.models.time import utcnow
from app.web.deps import get_now
from tests.app.clock import Clock
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
    row_counts,
    signed_in,
)

CASE = "a-fresh-head"  # the case add_case_attempt solves
FORM = {"title": "Week 1", "due": "2026-12-18T17:00", f"case:{CASE}": "on", "rounds": "2"}


@dataclass
class Term:
    app: FastAPI
    cohort: int
    other_cohort: int
    ids: dict[str, int]
    clients: dict[str, TestClient]
    clock: Clock

    def assignments(self) -> list[Assignment]:
        with Session(self.app.state.engine) as session:
            return list(session.exec(select(Assignment).order_by(Assignment.id)).all())  # type: ignore[arg-type]


@pytest.fixture
def term(make_settings: Callable[..., Settings]) -> Iterator[Term]:
    """Ida runs Autumn (ann, bob, cy); Oz runs Spring (cat). The clock reads now."""
    app = create_app(make_settings())
    with TestClient(app):
        engine = app.state.engine
        ids = {
            "ida": add_user(engine, "ida", Role.instructor),
            "oz": add_user(engine, "oz", Role.instructor),
            "ann": add_user(engine, "ann"),
            "bob": add_user(engine, "bob"),
            "cy": add_user(engine, "cy"),
            "cat": add_user(engine, "cat"),
        }
        autumn = add_cohort(
            engine, ids["ida"], name="Autumn", code="AUTUMN22",
            learners=[ids["ann"], ids["bob"], ids["cy"]],
        )  # fmt: skip
        spring = add_cohort(
            engine, ids["oz"], name="Spring", code="SPRING22", learners=[ids["cat"]]
        )
        clock = Clock(utcnow())
        app.dependency_overrides[get_now] = clock
        clients = {name: signed_in(app, name) for name in ("ida", "oz", "ann", "cat")}
        yield Term(app, autumn, spring, ids, clients, clock)
        for client in clients.values():
            client.close()


def test_an_instructor_sets_an_assignment_and_its_learners_see_it(term: Term) -> None:
    ida, ann, cat = term.clients["ida"], term.clients["ann"], term.clients["cat"]
    term.clock.now = datetime(2026, 12, 15, 17, 0, tzinfo=UTC)
    response = ida.post(f"/cohorts/{term.cohort}/assignments", data=FORM, follow_redirects=False)
    assert response.status_code == 303
    [stored] = term.assignments()
    assert stored.due_at == datetime(2026, 12, 18, 17, 0, tzinfo=UTC)  # the form's time, as UTC
    assert stored.items == [{"kind": "case", "key": CASE}, {"kind": "rounds", "key": "2"}]
    page = ann.get("/assignments").text
    assert "Week 1" in page and "Autumn" in page
    assert "due in 3 days" in page and "Fri 18 Dec 2026, 17:00 UTC" in page
    assert "A fresh head" in page and "Answer 2 curve rounds" in page
    assert page.count('· <span class="item-state">not yet</span>') == 2
    # A learner of another cohort sees none of it; an instructor is shown where to set theirs.
    assert "Week 1" not in cat.get("/assignments").text
    assert "To set your own cohorts' assignments" in ida.get("/assignments").text
    assert "To set your own cohorts' assignments" not in cat.get("/assignments").text


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": "  "}, "title"),
        ({"title": "x" * 121}, "title"),
        ({"due": "next friday"}, "due"),
        ({"due": "1999-12-31T23:00"}, "due"),
        ({"case:no-such-case": "on"}, "items"),
        ({f"case:{CASE}": "", "rounds": ""}, "items"),
        ({"rounds": "11"}, "rounds"),
        ({"rounds": "-1"}, "rounds"),
    ],
)
def test_a_wrong_field_is_a_422_naming_it_and_stores_nothing(
    term: Term, change: dict[str, str], field: str
) -> None:
    before = row_counts(term.app.state.engine)
    response = term.clients["ida"].post(f"/cohorts/{term.cohort}/assignments", data=FORM | change)
    assert response.status_code == 422
    assert f'id="error-{field}"' in response.text
    assert row_counts(term.app.state.engine) == before


def test_the_same_form_sent_twice_stores_one_and_another_under_its_title_is_a_409(
    term: Term,
) -> None:
    ida = term.clients["ida"]
    url = f"/cohorts/{term.cohort}/assignments"
    first = ida.post(url, data=FORM, follow_redirects=False)
    again = ida.post(url, data=FORM, follow_redirects=False)
    assert first.status_code == again.status_code == 303
    assert first.headers["location"] == again.headers["location"]
    clash = ida.post(url, data=FORM | {"due": "2026-12-19T17:00"})
    assert clash.status_code == 409 and "already has an assignment called" in clash.text
    [stored] = term.assignments()
    assert stored.due_at == datetime(2026, 12, 18, 17, 0, tzinfo=UTC)


def test_work_after_the_due_date_is_marked_late_not_refused(term: Term) -> None:
    engine = term.app.state.engine
    ann, bob = term.ids["ann"], term.ids["bob"]
    now = utcnow()
    term.clock.now = now + timedelta(minutes=1)
    # Due an hour ago: ann's case, solved now, is late; due tomorrow: on time.
    late = add_assignment(
        engine, term.cohort, term.ids["ida"], title="Past", due_at=now - timedelta(hours=1)
    )
    on_time = add_assignment(engine, term.cohort, term.ids["ida"], title="Next")
    add_case_attempt(engine, ann)
    add_case_attempt(engine, bob, stage="diagnosing")  # type: ignore[arg-type]
    page = term.clients["ann"].get("/assignments").text
    assert re.search(rf'id="assignment-{late}">\s*<h2>Past <small class="state-late">late', page)
    assert re.search(rf'id="assignment-{on_time}">\s*<h2>Next <small class="state-done">done', page)
    assert 'class="item-done-late"' in page and 'class="item-done"' in page
    board = term.clients["ida"].get(f"/cohorts/{term.cohort}/assignments").text
    standing = re.findall(
        r'data-username="(\w+)"><th scope="row">\w+</th>\s*<td class="state-(\w+)"', board
    )
    # Past first (sooner due): ann late, bob and cy overdue; then Next: ann done, others open.
    assert standing == [
        ("ann", "late"), ("bob", "overdue"), ("cy", "overdue"),
        ("ann", "done"), ("bob", "open"), ("cy", "open"),
    ]  # fmt: skip


def test_each_kind_of_item_is_done_as_the_grids_define_it(term: Term) -> None:
    engine = term.app.state.engine
    ann, bob = term.ids["ann"], term.ids["bob"]
    items = (("drill", DRILL), ("case", CASE), ("exercise", EXERCISE), ("rounds", "2"))
    add_assignment(engine, term.cohort, term.ids["ida"], items=items)
    # Ann: handed in the drill, solved the case, passed the exercise, answered two rounds.
    add_submission(
        engine, ann, add_attempt(engine, ann, fixed=False), add_attempt(engine, ann, fixed=True)
    )
    add_case_attempt(engine, ann)
    add_exercise_run(engine, ann, judgement="failed")
    add_exercise_run(engine, ann, judgement="passed")
    add_round(engine, ann)
    add_round(engine, ann, number=2)
    # Bob: changes requested on the drill, the case still open, the exercise failed, one
    # round answered and one not.
    failed, fixed = add_attempt(engine, bob, fixed=False), add_attempt(engine, bob, fixed=True)
    add_submission(engine, bob, failed, fixed, status="changes_requested")
    add_case_attempt(engine, bob, stage="diagnosing")  # type: ignore[arg-type]
    add_exercise_run(engine, bob, judgement="failed")
    add_round(engine, bob)
    add_round(engine, bob, answered=False, number=2)
    pages = {name: signed_in(term.app, name).get("/assignments").text for name in ("ann", "bob")}
    states = {
        name: dict(
            re.findall(r'data-item="([^"]+)">.*?<span class="item-state">([^<]+)<', page, re.S)
        )
        for name, page in pages.items()
    }
    fields = {f"{kind}:{key}" for kind, key in items}
    assert states["ann"] == dict.fromkeys(fields, "done")
    assert states["bob"] == dict.fromkeys(fields, "not yet")


SUMMARY_ROW = re.compile(
    r'<tr data-username="(\w+)"><th scope="row">\w+</th>\s*'
    r'<td class="num" data-count="done">([^<]+)</td>\s*'
    r'<td class="num" data-count="due">(\d+)</td>\s*'
    r'<td class="num[^"]*" data-count="overdue">(\d+)</td>\s*<td>(.*?)</td>'
)


def summary_rows(page: str) -> dict[str, tuple[str, ...]]:
    """The cohort summary: username -> (done, due, overdue, last active)."""
    return {found[0]: found[1:] for found in SUMMARY_ROW.findall(page)}


def test_the_cohort_page_sums_up_each_learner_before_the_grids(term: Term) -> None:
    engine = term.app.state.engine
    ida, ann = term.ids["ida"], term.ids["ann"]
    now = utcnow()
    term.clock.now = now + timedelta(minutes=1)
    add_assignment(engine, term.cohort, ida, title="Past", due_at=now - timedelta(days=1))
    add_assignment(engine, term.cohort, ida, title="Next")
    add_assignment(engine, term.cohort, ida, title="Later", items=(("rounds", "3"),))
    add_case_attempt(engine, ann)
    page = term.clients["ida"].get(f"/cohorts/{term.cohort}").text
    assert page.index('id="cohort-summary"') < page.index('id="cohort-grid"')
    rows = summary_rows(page)
    assert rows["ann"][:3] == ("2 (1 late)", "1", "0")
    assert rows["ann"][3].endswith("ago</time>")
    assert rows["bob"] == ("0", "2", "1", "never")
    assert f'href="/cohorts/{term.cohort}/gradebook.csv"' in page
    for grid in ("#cohort-grid", "#cases", "#exercises", "#practice"):
        assert f'href="{grid}"' in page


def test_an_edit_from_an_overtaken_form_is_a_409_and_a_removal_is_final(term: Term) -> None:
    ida = term.clients["ida"]
    assignment = add_assignment(term.app.state.engine, term.cohort, term.ids["ida"])
    edit = ida.get(f"/assignments/{assignment}/edit").text
    assert 'name="version" value="1"' in edit and f'name="case:{CASE}" value="on" checked' in edit
    first = ida.post(f"/assignments/{assignment}", data=FORM | {"title": "Week 1b", "version": "1"})
    assert first.status_code == 200 and "Week 1b" in first.text  # followed to the cohort's list
    stale = ida.post(f"/assignments/{assignment}", data=FORM | {"title": "Week 1c", "version": "1"})
    assert stale.status_code == 409 and "after you opened the form" in stale.text
    stale_removal = ida.post(f"/assignments/{assignment}/delete", data={"version": "1"})
    assert stale_removal.status_code == 409
    [stored] = term.assignments()
    assert (stored.title, stored.version) == ("Week 1b", 2)
    removed = ida.post(
        f"/assignments/{assignment}/delete", data={"version": "2"}, follow_redirects=False
    )
    assert removed.status_code == 303 and term.assignments() == []
    assert ida.post(f"/assignments/{assignment}/delete", data={"version": "2"}).status_code == 404
    assert ida.post(f"/assignments/{assignment}", data=FORM | {"version": "2"}).status_code == 404


def test_another_cohorts_instructor_and_learners_cannot_touch_it(term: Term) -> None:
    assignment = add_assignment(term.app.state.engine, term.cohort, term.ids["ida"])
    before = row_counts(term.app.state.engine)
    for name in ("oz", "ann", "cat"):
        client = term.clients[name]
        assert client.get(f"/assignments/{assignment}/edit").status_code == 404
        assert (
            client.post(f"/assignments/{assignment}", data=FORM | {"version": "1"}).status_code
            == 404
        )
        assert (
            client.post(f"/assignments/{assignment}/delete", data={"version": "1"}).status_code
            == 404
        )
        assert client.post(f"/cohorts/{term.cohort}/assignments", data=FORM).status_code == 404
        assert client.get(f"/cohorts/{term.cohort}/gradebook.csv").status_code == 404
    assert row_counts(term.app.state.engine) == before
    # Oz's own cohort is his to set work for.
    own = term.clients["oz"].post(
        f"/cohorts/{term.other_cohort}/assignments", data=FORM, follow_redirects=False
    )
    assert own.status_code == 303


def gated(original: Callable[..., Any], parties: int) -> Callable[..., Any]:
    """`original`, except that its first `parties` calls wait for one another after running:
    each caller then goes on believing no assignment has its title yet."""
    barrier = threading.Barrier(parties)
    lock = threading.Lock()
    calls = 0

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = original(*args, **kwargs)
        with lock:
            calls += 1
            waits = calls <= parties
        if waits:
            barrier.wait(timeout=30)
        return result

    return wrapper


def at_once(requests: list[Callable[[], Any]]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return [future.result(timeout=60) for future in [pool.submit(r) for r in requests]]


@pytest.mark.parametrize("same", [True, False], ids=["same form", "another due date"])
def test_two_presses_at_once_store_one_assignment(
    term: Term, monkeypatch: pytest.MonkeyPatch, same: bool
) -> None:
    """Both pass the title look-up before either stores: the unique constraint decides, and the
    loser answers with the winner's assignment if it asked for the same, else 409; never 500."""
    monkeypatch.setattr(service, "_titled", gated(service._titled, 2))
    url = f"/cohorts/{term.cohort}/assignments"
    forms = [FORM, FORM if same else FORM | {"due": "2026-12-19T17:00"}]
    clients = [term.clients["ida"], signed_in(term.app, "ida")]
    answers = at_once(
        [
            functools.partial(c.post, url, data=f, follow_redirects=False)
            for c, f in zip(clients, forms, strict=True)
        ]
    )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == ([303, 303] if same else [303, 409])
    assert len(term.assignments()) == 1
    clients[1].close()


def test_two_edits_from_one_version_at_once_keep_one(term: Term) -> None:
    assignment = add_assignment(term.app.state.engine, term.cohort, term.ids["ida"])
    clients = [term.clients["ida"], signed_in(term.app, "ida")]
    titles = ["Edited in tab one", "Edited in tab two"]
    answers = at_once(
        [
            functools.partial(
                client.post, f"/assignments/{assignment}",
                data=FORM | {"title": title, "version": "1"}, follow_redirects=False,
            )
            for client, title in zip(clients, titles, strict=True)
        ]
    )  # fmt: skip
    assert sorted(answer.status_code for answer in answers) == [303, 409]
    [stored] = term.assignments()
    winner = titles[[answer.status_code for answer in answers].index(303)]
    assert (stored.title, stored.version) == (winner, 2)
    clients[1].close()
