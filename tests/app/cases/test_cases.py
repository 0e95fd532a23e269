"""Working a case through the web app, with real runs: the story to the revealed truth, the
stage rules (diagnosis first, budget, one verdict), nothing of the cause on any page or stream
before the verdict, and access control."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlmodel import Session, select

from app.cases.models import CaseAttempt, CaseRun
from app.core.config import Settings
from app.runs.models import Attempt
from drills.cases.contract import Case, Cause
from drills.cases.evidence import found_in, leaks, telltales
from drills.cases.registry import all_cases, get_case
from tests.conftest import RUN_WAIT_S, log_in, make_user

# The cap on a learner's runs in flight that the test apps keep (the default).
RUNS_PER_LEARNER = Settings.model_fields["runs_per_learner"].default
CASE = "a-fresh-head"  # optimizer-membership: the backbone or the head left out of the optimizer


def engine_of(client: TestClient) -> Any:
    return client.app.state.engine  # type: ignore[attr-defined]


def open_case(client: TestClient, key: str = CASE) -> int:
    response = client.post(f"/cases/{key}/attempts", follow_redirects=False)
    assert response.status_code == 303, response.text
    return int(response.headers["location"].rsplit("/", 1)[1])


def drawn(client: TestClient, case_attempt_id: int) -> Cause:
    """The cause this attempt's draw planted, read where the server keeps it."""
    with Session(engine_of(client)) as session:
        stored = session.get(CaseAttempt, case_attempt_id)
        assert stored is not None
        return get_case(stored.case_key).cause(stored.cause)


def other_than(client: TestClient, case_attempt_id: int, *keys: str) -> Cause:
    """The first of `keys` (causes of the set) that this attempt did not draw."""
    hidden = drawn(client, case_attempt_id)
    with Session(engine_of(client)) as session:
        stored = session.get(CaseAttempt, case_attempt_id)
        assert stored is not None
        case_set = get_case(stored.case_key).case_set
    return case_set.cause(next(key for key in keys if key != hidden.key))


def case_json(client: TestClient, case_attempt_id: int) -> dict[str, Any]:
    response = client.get(f"/api/cases/attempts/{case_attempt_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_until_runs_end(
    client: TestClient, case_attempt_id: int, timeout: float = RUN_WAIT_S
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = case_json(client, case_attempt_id)
        if all(run["status"] not in ("queued", "running") for run in body["runs"]):
            return body
        time.sleep(0.1)
    raise AssertionError("case runs still going")


def learner_views(client: TestClient, case_attempt_id: int, body: dict[str, Any]) -> list[str]:
    """Everything the learner can read of an open case attempt: its page, its body partial, the
    case list, its JSON, and every run's event stream."""
    views = [
        client.get(f"/cases/attempts/{case_attempt_id}").text,
        client.get(f"/cases/attempts/{case_attempt_id}/body").text,
        client.get("/cases").text,
        str(body),
    ]
    for run in body["runs"]:
        with client.stream("GET", f"/cases/runs/{run['id']}/events") as stream:
            views.append("".join(stream.iter_text()))
    return views


def option(page: str, text_start: str, name: str) -> str:
    """The value of the radio/checkbox `name` whose label starts with `text_start`."""
    shown = text_start.replace("&", "&amp;").replace("'", "&#39;")  # as the template escapes it
    pattern = rf'name="{name}" value="([^"]+)"[^>]*> {re.escape(shown)}'
    found = re.search(pattern, page)
    assert found, f"no {name} option starting {text_start!r}"
    return found.group(1)


def diagnose(
    client: TestClient, case_attempt_id: int, leading: str, alternatives: list[str], first_test: str
) -> Any:
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    data: dict[str, Any] = {
        "leading": option(page, leading, "leading"),
        "alternatives": [option(page, text, "alternatives") for text in alternatives],
        "first_test": first_test,
        "intervention": "Give the optimizer every parameter.",
        "confirmation": "The loss goes to about zero and the backbone moves.",
    }
    return client.post(
        f"/cases/attempts/{case_attempt_id}/diagnosis", data=data, follow_redirects=False
    )


def test_a_case_from_story_to_revealed_truth(client: TestClient) -> None:
    case_attempt_id = open_case(client)
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert get_case(CASE).story in page
    body = wait_until_runs_end(client, case_attempt_id)
    assert [run["kind"] for run in body["runs"]] == ["symptom"]
    assert body["runs"][0]["evidence"]["series"]["training loss"]

    # Experiments wait for the diagnosis.
    early = client.post(
        f"/cases/attempts/{case_attempt_id}/experiments", data={"experiment": "update-sizes"}
    )
    assert early.status_code == 409
    hidden = drawn(client, case_attempt_id)
    rival = other_than(client, case_attempt_id, *get_case(CASE).causes)
    response = diagnose(client, case_attempt_id, hidden.text, [rival.text], "update-sizes")
    assert response.status_code == 303, response.text
    assert (
        client.post(
            f"/cases/attempts/{case_attempt_id}/experiments",
            data={"experiment": "update-sizes"},
            follow_redirects=False,
        ).status_code
        == 303
    )
    body = wait_until_runs_end(client, case_attempt_id)
    numbers = body["runs"][1]["evidence"]["numbers"]
    assert {row["label"] for row in numbers} >= {"How far the backbone moved in total"}
    left_out = hidden.knobs["exclude"]  # "backbone" or "head"
    assert next(r["value"] for r in numbers if left_out in r["label"]) == 0.0  # it never moved

    # The diagnosis is kept as it was once an experiment started, each alternative an item.
    locked = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert 'name="leading"' not in locked
    assert f'<ul class="alternatives"><li>{escape(rival.text)}</li></ul>' in locked
    again = client.post(
        f"/cases/attempts/{case_attempt_id}/diagnosis",
        data={
            "leading": "cause-1",
            "first_test": "update-sizes",
            "intervention": "x",
            "confirmation": "y",
        },
    )
    assert again.status_code == 409
    assert case_json(client, case_attempt_id)["diagnosis"]["first_test"] == "update-sizes"

    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    verdict = client.post(
        f"/cases/attempts/{case_attempt_id}/verdict",
        data={
            "cause": option(page, hidden.text, "cause"),
            "fix": hidden.fix,
        },
        follow_redirects=False,
    )
    assert verdict.status_code == 303, verdict.text
    wait_until_runs_end(client, case_attempt_id)
    body = case_json(client, case_attempt_id)
    assert body["stage"] == "revealed"
    score = body["score"]
    assert score["cause_named"] and score["fix_verified"] and score["leading_right"]
    assert score["experiments"] == [{"key": "update-sizes", "separated": True, "would_have": []}]
    assert score["points"] == 4
    assert body["truth"]["cause"] == hidden.key
    assert body["truth"]["knobs"]["exclude"] == left_out
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert "python -m drills run optimizer-membership" in page  # the replay commands, now
    assert "As handed and fixed" in page
    # The reveal's table reads each experiment's finding in words, not as its internal key; the
    # runs' statuses say a run finished, not that a run showing a bug "succeeded".
    readings = re.findall(r"→ <strong>([^<]+)</strong>", page)
    assert readings and all("-" not in reading for reading in readings), readings
    assert ">succeeded<" not in page and ">finished<" in page

    # The revealed case is in the signed export; a case still open is not (its draw tells).
    still_open = open_case(client, "a-suspicious-checkpoint")
    statements = client.get("/portfolio/export.json").json()["statements"]
    cases_exported = [s for s in statements if s["id"].startswith("drillbook:case-attempt:")]
    assert [s["id"] for s in cases_exported] == [f"drillbook:case-attempt:{case_attempt_id}"]
    assert cases_exported[0]["verb"]["display"]["en"] == "solved"
    assert cases_exported[0]["result"]["score"] == {"raw": 4, "max": 4}
    assert cases_exported[0]["result"]["diagnosis"]["leading"] == hidden.key
    assert all(str(still_open) not in s["id"] for s in statements)
    wait_until_runs_end(client, still_open)  # no run is left on the shared cluster


def test_a_wrong_verdict_and_a_wrong_fix_score_as_such(client: TestClient) -> None:
    case_attempt_id = open_case(client, "a-suspicious-checkpoint")
    wait_until_runs_end(client, case_attempt_id)
    wrong = other_than(client, case_attempt_id, "head-not-optimized", "optimizer-holds-old-head")
    diagnose(client, case_attempt_id, wrong.text, [], "update-sizes")
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    client.post(
        f"/cases/attempts/{case_attempt_id}/verdict",
        # A fix no cause of the set is healed by: it verifies nothing, whatever the draw.
        data={"cause": option(page, wrong.text, "cause"), "fix": "unfreeze-backbone"},
    )
    wait_until_runs_end(client, case_attempt_id)
    body = case_json(client, case_attempt_id)
    score = body["score"]
    assert not score["cause_named"] and not score["fix_verified"] and not score["leading_right"]
    assert score["experiments_used"] == 0
    # The cause named wrongly is a review item now, sending the learner to a new draw.
    due = client.get("/practice").text
    assert 'data-item="case-miss:a-suspicious-checkpoint"' in due
    item = client.get("/practice/case-miss:a-suspicious-checkpoint").text
    # The prompt goes through Markdown, which leaves an apostrophe as it is; a template escapes it.
    assert wrong.text in item or wrong.text.replace("'", "&#39;") in item


def test_nothing_names_the_cause_before_the_verdict(client: TestClient) -> None:
    case = get_case(CASE)
    case_attempt_id = open_case(client)
    diagnose(
        client,
        case_attempt_id,
        "Nothing is wrong",
        ["The optimizer was built without the head"],
        "parameter-health",
    )
    for experiment in ("parameter-health", "update-sizes", "optimizer-inventory"):
        client.post(
            f"/cases/attempts/{case_attempt_id}/experiments", data={"experiment": experiment}
        )
        wait_until_runs_end(client, case_attempt_id)
    body = case_json(client, case_attempt_id)
    responses = learner_views(client, case_attempt_id, body)
    # A case's runs are not the learner's drill attempts, nor readable as attempts.
    with Session(engine_of(client)) as session:
        run_ids = [
            a.id
            for a in session.exec(select(Attempt).where(Attempt.case_attempt_id == case_attempt_id))
        ]
    for attempt_id in run_ids:
        assert client.get(f"/api/attempts/{attempt_id}").status_code == 404
        assert client.get(f"/attempts/{attempt_id}").status_code == 404
    # Nor listed among the drill's attempts (the drill page names its drill, of course).
    drill_page = client.get("/drills/optimizer-membership").text
    assert not any(f'/attempts/{attempt_id}"' in drill_page for attempt_id in run_ids)
    for text in responses:
        assert leaks(case, text) == [], leaks(case, text)
    assert len(body["runs"]) == 4


def test_the_budget_holds_when_pressed_twice_at_once(client: TestClient) -> None:
    case_attempt_id = open_case(client)
    diagnose(client, case_attempt_id, "Nothing is wrong", [], "parameter-health")
    with Session(engine_of(client)) as session:
        row = session.get(CaseAttempt, case_attempt_id)
        assert row is not None
        row.budget = 1
        session.add(row)
        session.commit()
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def press(experiment: str) -> None:
        barrier.wait()
        codes.append(
            client.post(
                f"/cases/attempts/{case_attempt_id}/experiments",
                data={"experiment": experiment},
                follow_redirects=False,
            ).status_code
        )

    threads = [
        threading.Thread(target=press, args=(e,)) for e in ("update-sizes", "parameter-health")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303, 409]
    assert len(case_json(client, case_attempt_id)["experiments_spent"]) == 1
    wait_until_runs_end(client, case_attempt_id)


def test_two_verdicts_at_once_store_one(client: TestClient) -> None:
    """The verdict ends the case once: two presses at once (two tabs, a double click) get one
    303 and one 409, and only one fix run is started. Held by the row lock (an UPDATE) on SQLite
    and PostgreSQL alike, not by the order the event loop takes requests in."""
    case_attempt_id = open_case(client, "a-suspicious-checkpoint")
    wait_until_runs_end(client, case_attempt_id)
    diagnose(client, case_attempt_id, "Nothing is wrong", [], "update-sizes")
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    cause = option(page, "Nothing is wrong", "cause")
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def press(fix: str) -> None:
        barrier.wait()
        answer = client.post(
            f"/cases/attempts/{case_attempt_id}/verdict",
            data={"cause": cause, "fix": fix},
            follow_redirects=False,
        )
        codes.append(answer.status_code)

    threads = [
        threading.Thread(target=press, args=(fix,))
        for fix in ("optimize-all-parameters", "unfreeze-backbone")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303, 409]
    wait_until_runs_end(client, case_attempt_id)
    body = case_json(client, case_attempt_id)
    assert body["stage"] == "revealed"
    with Session(engine_of(client)) as session:
        kinds = session.exec(
            select(CaseRun.kind).where(CaseRun.case_attempt_id == case_attempt_id)
        ).all()
    assert sorted(kinds).count("fix") == 1, kinds


def test_another_learner_cannot_read_a_case_attempt(client: TestClient) -> None:
    case_attempt_id = open_case(client)
    body = wait_until_runs_end(client, case_attempt_id)
    make_user(engine_of(client), "learner-b")
    log_in(client, "learner-b")
    assert client.get(f"/cases/attempts/{case_attempt_id}").status_code == 404
    assert client.get(f"/api/cases/attempts/{case_attempt_id}").status_code == 404
    assert client.get(f"/cases/runs/{body['runs'][0]['id']}/events").status_code == 404
    assert (
        client.post(
            f"/cases/attempts/{case_attempt_id}/experiments", data={"experiment": "update-sizes"}
        ).status_code
        == 404
    )


def test_bad_input_names_the_field_and_stores_nothing(client: TestClient) -> None:
    case_attempt_id = open_case(client)
    response = client.post(
        f"/cases/attempts/{case_attempt_id}/diagnosis",
        data={"leading": "cause-99", "first_test": "update-sizes"},
    )
    assert response.status_code == 422
    assert 'id="error-leading"' in response.text
    assert case_json(client, case_attempt_id)["stage"] == "diagnosing"
    assert client.post("/cases/no-such-case/attempts").status_code == 404
    wait_until_runs_end(client, case_attempt_id)


@pytest.mark.parametrize("path", ["/cases/attempts/1", "/api/cases/attempts/1"])
def test_visitors_are_asked_to_log_in(anonymous: TestClient, path: str) -> None:
    response = anonymous.get(path, follow_redirects=False)
    assert response.status_code in (303, 401)


def test_the_instructor_sees_results_misconceptions_and_sets_the_budget(client: TestClient) -> None:
    from app.accounts.models import Role

    engine = engine_of(client)
    make_user(engine, "teacher", Role.instructor)
    log_in(client, "teacher")
    cohort_page = client.post("/cohorts", data={"name": "Debugging 101"}, follow_redirects=False)
    cohort_url = cohort_page.headers["location"]
    code = re.search(r'id="join-code">([^<]+)<', client.get(cohort_url).text).group(1)  # type: ignore[union-attr]
    assert client.post(f"{cohort_url}/case-budget", data={"case_budget": "0"}).status_code == 422
    assert (
        client.post(
            f"{cohort_url}/case-budget", data={"case_budget": "2"}, follow_redirects=False
        ).status_code
        == 303
    )

    log_in(client, "learner-a")
    client.post("/cohorts/join", data={"code": code})
    case_attempt_id = open_case(client, "a-suspicious-checkpoint")
    assert case_json(client, case_attempt_id)["budget"] == 2  # the cohort's budget
    wait_until_runs_end(client, case_attempt_id)
    wrong = other_than(client, case_attempt_id, "head-not-optimized", "optimizer-holds-old-head")
    diagnose(client, case_attempt_id, wrong.text, [], "update-sizes")
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    client.post(
        f"/cases/attempts/{case_attempt_id}/verdict",
        data={"cause": option(page, wrong.text, "cause"), "fix": "unfreeze-backbone"},
    )
    wait_until_runs_end(client, case_attempt_id)
    assert case_json(client, case_attempt_id)["stage"] == "revealed"

    log_in(client, "teacher")
    grid = client.get(cohort_url).text
    assert f'href="/cases/attempts/{case_attempt_id}">missed' in grid
    assert f"{wrong.text.replace(chr(39), '&#39;')} (1)" in grid
    review = client.get(f"/cases/attempts/{case_attempt_id}")
    assert review.status_code == 200
    assert 'action="/cases/a-suspicious-checkpoint/attempts"' not in review.text
    assert f'href="/cases/attempts/{case_attempt_id}#case-review"' in client.get("/reviews").text
    fields = {"score.alternatives": "0", "score.test_choice": "1", "score.verification": "2"}
    asked = client.post(
        f"/cases/attempts/{case_attempt_id}/review", data=fields | {"decision": "changes_requested"}
    )
    assert asked.status_code == 422 and "say what to change" in asked.text
    done = client.post(
        f"/cases/attempts/{case_attempt_id}/review",
        data=fields | {"decision": "changes_requested", "comment": "Name **two** alternatives."},
        follow_redirects=False,
    )
    assert done.status_code == 303
    again = client.post(
        f"/cases/attempts/{case_attempt_id}/review", data=fields | {"decision": "accepted"}
    )
    assert again.status_code == 409
    assert f"/cases/attempts/{case_attempt_id}#case-review" not in client.get("/reviews").text
    log_in(client, "learner-a")
    assert (
        client.post(
            f"/cases/attempts/{case_attempt_id}/review", data=fields | {"decision": "accepted"}
        ).status_code
        == 403
    )
    mine = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert "changes requested · 3 / 6" in mine and "<strong>two</strong>" in mine


def set_of(key: str) -> list[Case]:
    """The offered cases that stand on the same case set as `key`, itself included."""
    case_set = get_case(key).case_set
    return [case for case in all_cases() if case.case_set is case_set]


def walked_case(key: str) -> bool:
    """Whether the case is the one of its set whose walk runs every experiment: the one with the
    most causes (the first of them on a tie)."""
    return max(set_of(key), key=lambda case: len(case.causes)).key == key


@pytest.mark.slow
@pytest.mark.parametrize("key", [case.key for case in all_cases()])
def test_no_response_of_an_open_case_names_its_cause(client: TestClient, key: str) -> None:
    """Every case of the pool (a test each, so the walk spreads over the test processes),
    opened for real: its symptom run, and every response a learner can get before the verdict
    (pages, JSON, each run's event stream, refusals), searched for the cause's telltales.

    The experiments run on one case of each set (budget raised to allow them all), searched for
    the telltales of every cause of the set: the cases of a set share their experiments and the
    code that shows them, and what differs between cases (story, title, draw, the symptom run)
    is walked on every case. The 48 walks used to run their set's experiments on every case."""
    case = get_case(key)
    case_attempt_id = open_case(client, case.key)
    with Session(engine_of(client)) as session:
        row = session.get(CaseAttempt, case_attempt_id)
        assert row is not None
        row.budget = len(case.case_set.experiments)
        session.add(row)
        session.commit()
    responses = [client.get(f"/cases/attempts/{case_attempt_id}").text]
    first = case.case_set.experiments[0].key
    responses.append(
        client.post(  # a refusal: no experiment before the diagnosis
            f"/cases/attempts/{case_attempt_id}/experiments", data={"experiment": first}
        ).text
    )
    responses.append(
        client.post(  # a 422 echoing the form
            f"/cases/attempts/{case_attempt_id}/diagnosis", data={"leading": "cause-1"}
        ).text
    )
    client.post(
        f"/cases/attempts/{case_attempt_id}/diagnosis",
        data={
            "leading": "cause-1",
            "alternatives": ["cause-2"],
            "first_test": first,
            "intervention": "x",
            "confirmation": "y",
        },
    )
    walked = walked_case(key)
    secrets = telltales(case)
    if walked:
        # The telltales of every cause any case of the set may hide.
        secrets = set().union(*(telltales(other) for other in set_of(key)))
        for experiment in case.case_set.experiments:
            # The learner's cap on runs in flight would refuse a fifth (for htmx, in a 200
            # that shows the case with the reason on top): wait for the runs to end first.
            in_flight = [
                run
                for run in case_json(client, case_attempt_id)["runs"]
                if run["status"] in ("queued", "running")
            ]
            if len(in_flight) >= RUNS_PER_LEARNER:
                wait_until_runs_end(client, case_attempt_id, timeout=180)
            posted = client.post(
                f"/cases/attempts/{case_attempt_id}/experiments",
                data={"experiment": experiment.key},
                headers={"HX-Request": "true"},
            )
            responses.append(posted.text)
    body = wait_until_runs_end(client, case_attempt_id, timeout=180)
    # Every experiment ran: before the wait above, a set of four or more met the cap, and the
    # walk read the refusal in place of the last experiments' evidence.
    assert len(body["runs"]) == (1 + len(case.case_set.experiments) if walked else 1)
    responses += learner_views(client, case_attempt_id, body)
    for text in responses:
        assert found_in(secrets, text) == [], (case.key, found_in(secrets, text))


def test_a_run_that_crashes_shows_what_pytorch_raised_not_the_drills_explanation(
    client: TestClient,
) -> None:
    case_attempt_id = open_case(client, "first-step-crash")  # either cause fails at backward
    body = wait_until_runs_end(client, case_attempt_id)
    assert body["runs"][0]["status"] == "failed"
    assert "does not require grad" in body["runs"][0]["evidence"]["raised"]
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert "PyTorch raised" in page and "does not require grad" in page
    assert "it was rebuilt from a plain number" not in page  # the drill's own account
