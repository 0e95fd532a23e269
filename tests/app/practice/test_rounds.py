"""Curve-diagnosis rounds through the web app, with real runs: a round from its curves to the
truth, the leading hypothesis scored by the drill's own reading of the run, nothing of the setup
in any response before the answer, one answer and one round per double press, a run that came
to nothing, access, the instructor's review, and no repeat within a week."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlmodel import Session, select

from app.accounts.models import Role
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt, AttemptStatus
from drills.cases.evidence import found_in
from drills.core.registry import get_drill
from drills.practice.round_answers import case_set_of, cause_of, telltales
from drills.practice.rounds import all_variants, get_variant
from tests.app.clock import MONDAY, Clock
from tests.app.factories import add_cohort, engine_of
from tests.conftest import log_in, make_user

VARIANT_KEYS = [variant.key for variant in all_variants()]


def start_round(client: TestClient) -> int:
    response = client.post("/practice/rounds", follow_redirects=False)
    assert response.status_code == 303, response.text
    return int(response.headers["location"].rsplit("/", 1)[1])


def stored(client: TestClient, round_id: int) -> tuple[DiagnosisRound, Attempt]:
    with Session(engine_of(client)) as session:
        found = session.get(DiagnosisRound, round_id)
        run = session.exec(select(Attempt).where(Attempt.round_id == round_id)).one()
        assert found is not None
        return found, run


def wait_for_run(client: TestClient, round_id: int, timeout: float = 90) -> Attempt:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, run = stored(client, round_id)
        if run.final:
            return run
        time.sleep(0.1)
    raise AssertionError(f"round {round_id}'s run still going")


def option_for(client: TestClient, round_id: int, cause_key: str) -> str:
    """The form value ("cause-N") of a cause of the round's case set."""
    diagnosis_round, _ = stored(client, round_id)
    case_set = case_set_of(get_variant(diagnosis_round.variant_key))
    index = [cause.key for cause in case_set.causes].index(cause_key)
    return f"cause-{index + 1}"


def answer(
    client: TestClient, round_id: int, leading: str, *, first_test: str | None = None
) -> Any:
    diagnosis_round, _ = stored(client, round_id)
    case_set = case_set_of(get_variant(diagnosis_round.variant_key))
    rival = next(cause.key for cause in case_set.causes if cause.key != leading)
    return client.post(
        f"/practice/rounds/{round_id}/answer",
        data={
            "leading": option_for(client, round_id, leading),
            "alternatives": [option_for(client, round_id, rival)],
            "first_test": first_test or case_set.experiments[0].key,
            "intervention": "Put the planted setting back.",
            "confirmation": "The curve falls like a healthy run's.",
        },
        follow_redirects=False,
    )


def test_a_round_from_its_curves_to_the_truth(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    run = wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    variant = get_variant(diagnosis_round.variant_key)
    page = client.get(f"/practice/rounds/{round_id}").text
    assert 'id="answer-round"' in page and "disabled" not in page.split('id="answer-round"')[1][:20]
    assert re.search(r'name="leading" value="cause-1"', page)
    # The charts carry the run's points under the case set's neutral names.
    chart_labels = {
        label for chart in case_set_of(variant).charts for label in chart.series.values()
    }
    assert any(f'"{label}' in page for label in chart_labels)

    response = answer(client, round_id, cause_of(variant).key)
    assert response.status_code == 303
    diagnosis_round, run = stored(client, round_id)
    assert diagnosis_round.answered_at is not None
    score = diagnosis_round.score or {}
    # The leading hypothesis is scored by the drill's own reading of this very run.
    assert score["observed"] == run.observed_hypothesis
    assert score["leading_right"] is (cause_of(variant).verdict == run.observed_hypothesis)
    assert score["cause_named"] is True
    revealed = client.get(f"/practice/rounds/{round_id}").text
    assert escape(cause_of(variant).text) in revealed
    assert escape(run.command) in revealed
    assert 'id="round-parts"' in revealed and "a model answer" in revealed
    assert f"/drills/{variant.drill}?seed={diagnosis_round.seed}" in revealed
    assert "Answer and reveal" not in revealed
    # In the export, as a signed statement, once answered.
    export = client.get("/portfolio/export.json").json()
    [statement] = [
        s for s in export["statements"] if s["id"] == f"drillbook:curve-round:{round_id}"
    ]
    assert statement["verb"]["display"]["en"] == "answered"
    assert statement["result"]["success"] is score["leading_right"]
    assert statement["result"]["response"]["leading"] == cause_of(variant).key
    assert statement["context"]["knobs"] == diagnosis_round.knobs
    assert len(statement["digest"]) == 64


def test_a_cause_the_run_does_not_show_scores_as_a_miss(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    run = wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    case_set = case_set_of(get_variant(diagnosis_round.variant_key))
    wrong = next(cause for cause in case_set.causes if cause.verdict != run.observed_hypothesis)
    assert answer(client, round_id, wrong.key).status_code == 303
    diagnosis_round, _ = stored(client, round_id)
    assert diagnosis_round.score is not None
    assert diagnosis_round.score["leading_right"] is False
    assert "The run shows something else" in client.get(f"/practice/rounds/{round_id}").text


def test_no_response_names_the_setup_before_the_answer(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    run = wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    variant = get_variant(diagnosis_round.variant_key)
    secrets = telltales(variant) | {str(diagnosis_round.seed), run.command.lower()}
    responses = {
        path: client.get(path).text
        for path in (
            f"/practice/rounds/{round_id}",
            f"/practice/rounds/{round_id}/body",
            "/practice/rounds",
            "/practice",
            "/portfolio/export.json",
        )
    }
    responses["a 422"] = client.post(
        f"/practice/rounds/{round_id}/answer", data={"leading": "cause-1"}
    ).text
    with client.stream("GET", f"/practice/rounds/{round_id}/events") as stream:
        responses["events"] = "".join(stream.iter_text())
    for where, text in responses.items():
        assert found_in(secrets, text) == [], where
    assert "curve-round" not in responses["/portfolio/export.json"]  # not before the answer
    # Pages that list every drill name this one too, but never the round's setup.
    drill_names = {variant.drill, get_drill(variant.drill).title.lower()}
    for path in ("/", "/progress"):
        assert found_in(secrets - drill_names, client.get(path).text) == [], path
    # The run is not the learner's attempt of the drill, nor readable as one.
    assert client.get(f"/api/attempts/{run.id}").status_code == 404
    assert client.get(f"/attempts/{run.id}").status_code == 404
    assert f'/attempts/{run.id}"' not in client.get(f"/drills/{variant.drill}").text
    # Once answered, the page says it all.
    answer(client, round_id, cause_of(variant).key)
    revealed = client.get(f"/practice/rounds/{round_id}").text
    assert found_in({variant.drill, str(diagnosis_round.seed)}, revealed)


def test_bad_answers_name_each_field_and_store_nothing(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    wait_for_run(client, round_id)
    response = client.post(
        f"/practice/rounds/{round_id}/answer",
        data={"leading": "cause-99", "alternatives": ["cause-77"], "first_test": "nope"},
    )
    assert response.status_code == 422
    for field in ("leading", "first_test", "intervention", "confirmation"):
        assert f'id="error-{field}"' in response.text
    diagnosis_round, _ = stored(client, round_id)
    assert diagnosis_round.answered_at is None and diagnosis_round.diagnosis is None


def test_an_answer_waits_for_the_whole_run(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    run = wait_for_run(client, round_id)
    with Session(engine_of(client)) as session:
        row = session.get(Attempt, run.id)
        assert row is not None
        row.status = AttemptStatus.running  # as if the run were still going
        session.add(row)
        session.commit()
    diagnosis_round, _ = stored(client, round_id)
    response = answer(client, round_id, cause_of(get_variant(diagnosis_round.variant_key)).key)
    assert response.status_code == 409
    assert "Wait for the run to end" in response.text
    assert stored(client, round_id)[0].answered_at is None


def test_two_answers_at_once_store_one(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    cause = cause_of(get_variant(diagnosis_round.variant_key)).key
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def press() -> None:
        barrier.wait()
        codes.append(answer(client, round_id, cause).status_code)

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303, 409]
    assert answer(client, round_id, cause).status_code == 409


def test_one_round_is_open_at_a_time_even_pressed_twice(client: TestClient, clock: Clock) -> None:
    barrier = threading.Barrier(2)
    locations: list[str] = []

    def press() -> None:
        barrier.wait()
        response = client.post("/practice/rounds", follow_redirects=False)
        locations.append(response.headers.get("location", str(response.status_code)))

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(locations)) == 1 and locations[0].startswith("/practice/rounds/")
    with Session(engine_of(client)) as session:
        assert len(session.exec(select(DiagnosisRound)).all()) == 1
        assert len(session.exec(select(Attempt).where(Attempt.round_id.is_not(None))).all()) == 1  # type: ignore[union-attr]
    round_id = int(locations[0].rsplit("/", 1)[1])
    wait_for_run(client, round_id)
    assert start_round(client) == round_id  # still unanswered: the same round again


def test_a_run_that_came_to_nothing_gives_way_to_a_new_round(
    client: TestClient, clock: Clock
) -> None:
    round_id = start_round(client)
    run = wait_for_run(client, round_id)
    with Session(engine_of(client)) as session:
        row = session.get(Attempt, run.id)
        assert row is not None
        row.status, row.observed_hypothesis = AttemptStatus.failed, None  # a worker lost
        session.add(row)
        session.commit()
    page = client.get(f"/practice/rounds/{round_id}").text
    assert "nothing to diagnose" in page and 'id="answer-round"' not in page
    # Its variant was never shown: it may be drawn again within the week.
    from app.practice import rounds

    with Session(engine_of(client)) as session:
        recent = rounds.recent_variants(session, learner_id=run.learner_id, today=MONDAY.date())
    assert stored(client, round_id)[0].variant_key not in recent
    planted = cause_of(get_variant(stored(client, round_id)[0].variant_key)).key
    refused = answer(client, round_id, planted)
    assert refused.status_code == 409 and "ended without a result" in refused.text
    new_round = start_round(client)
    assert new_round != round_id
    assert "no result" in client.get("/practice/rounds").text
    wait_for_run(client, new_round)  # no run is left on the shared cluster


def test_a_retired_setup_is_gone_and_gives_way(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    wait_for_run(client, round_id)
    with Session(engine_of(client)) as session:
        row = session.get(DiagnosisRound, round_id)
        assert row is not None
        row.variant_key = "retired-drill/retired-cause"
        session.add(row)
        session.commit()
    assert client.get(f"/practice/rounds/{round_id}").status_code == 410
    assert answer_status(client, round_id) == 410
    new_round = start_round(client)
    assert new_round != round_id
    assert client.get("/practice/rounds").status_code == 200
    wait_for_run(client, new_round)


def test_a_refusal_sent_by_htmx_is_shown(client: TestClient, clock: Clock) -> None:
    round_id = start_round(client)
    wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    cause = cause_of(get_variant(diagnosis_round.variant_key)).key
    assert answer(client, round_id, cause).status_code == 303
    client.headers["HX-Request"] = "true"
    try:
        again = answer(client, round_id, cause)
    finally:
        del client.headers["HX-Request"]
    # htmx swaps no 409: the round as it stands, with the reason on top.
    assert again.status_code == 200
    assert 'id="round-refusal"' in again.text and "answered already" in again.text
    assert 'id="round-reveal"' in again.text


def test_the_link_to_run_a_setup_keeps_list_knobs_as_the_form_writes_them(
    client: TestClient,
) -> None:
    from urllib.parse import parse_qsl, urlsplit

    from app.practice.drill_links import drill_setup_href
    from drills.core.knobs import resolve_knobs

    drill = get_drill("lr-sweep")
    knobs = resolve_knobs(drill, {"lrs": [1e-6, 1e-4, 0.01]})
    href = drill_setup_href("lr-sweep", 12345, knobs)
    query = dict(parse_qsl(urlsplit(href).query))
    assert query["knob.lrs"] == "1e-06,0.0001,0.01" and query["seed"] == "12345"
    form_knobs = {name[5:]: value for name, value in query.items() if name.startswith("knob.")}
    assert resolve_knobs(drill, form_knobs) == knobs
    page = client.get(href).text
    assert 'value="1e-06,0.0001,0.01"' in page


def test_no_variant_comes_back_within_a_week(client: TestClient, clock: Clock) -> None:
    seen: list[str] = []
    for day in range(3):
        clock.now = MONDAY + timedelta(days=day)
        for _ in range(2):
            round_id = start_round(client)
            wait_for_run(client, round_id)
            diagnosis_round, _ = stored(client, round_id)
            seen.append(diagnosis_round.variant_key)
            assert diagnosis_round.day == clock.now.date()
            answer(client, round_id, cause_of(get_variant(diagnosis_round.variant_key)).key)
    assert len(set(seen)) == len(seen), seen
    listing = client.get("/practice/rounds").text
    assert listing.count('href="/practice/rounds/') == len(seen)


def test_other_learners_cannot_reach_a_round_and_its_instructor_reviews_it(
    client: TestClient, clock: Clock
) -> None:
    engine = engine_of(client)
    round_id = start_round(client)
    wait_for_run(client, round_id)
    diagnosis_round, _ = stored(client, round_id)
    learner_id = diagnosis_round.learner_id
    answer(client, round_id, cause_of(get_variant(diagnosis_round.variant_key)).key)

    make_user(engine, "learner-b")
    log_in(client, "learner-b")
    for path in ("", "/body", "/events"):
        assert client.get(f"/practice/rounds/{round_id}{path}").status_code == 404
    assert answer_status(client, round_id) == 404

    teacher = make_user(engine, "teacher", Role.instructor)
    assert teacher.id is not None
    add_cohort(engine, teacher.id, name="Tuesday", code="TUESDAY1", learners=[learner_id])
    log_in(client, "teacher")
    page = client.get(f"/practice/rounds/{round_id}").text
    assert 'id="round-review"' in page and 'id="answer-round"' not in page
    assert f"/practice/rounds/{round_id}#round-review" in client.get("/reviews").text
    fields = {
        "score.alternatives": "2",
        "score.test_choice": "1",
        "score.verification": "2",
        "comment": "Name the **number** you expect.",
        "decision": "accepted",
    }
    response = client.post(
        f"/practice/rounds/{round_id}/review", data=fields, follow_redirects=False
    )
    assert response.status_code == 303
    assert client.post(f"/practice/rounds/{round_id}/review", data=fields).status_code == 409
    reviewed = client.get(f"/practice/rounds/{round_id}").text
    assert "accepted · 5 / 6" in reviewed and "<strong>number</strong>" in reviewed


def answer_status(client: TestClient, round_id: int) -> int:
    return client.post(
        f"/practice/rounds/{round_id}/answer", data={"leading": "cause-1"}
    ).status_code


@pytest.mark.parametrize("path", ["/practice/rounds", "/practice/rounds/1"])
def test_visitors_are_asked_to_log_in(anonymous: TestClient, path: str) -> None:
    assert anonymous.get(path, follow_redirects=False).status_code in (303, 401)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(all_variants())), ids=VARIANT_KEYS.__getitem__)
def test_no_response_names_the_setup(
    client: TestClient, clock: Clock, monkeypatch: pytest.MonkeyPatch, index: int
) -> None:
    """Every variant of the catalogue (a test each, so the walk spreads over the test
    processes), run for real through a round, then every response its learner can get before
    the answer searched for the variant's telltales."""
    from app.practice import rounds
    from drills.core.knobs import resolve_knobs
    from drills.practice.rounds import RoundDraw

    variant = all_variants()[index]
    # The shortest run a draw may give (the walk reads what the pages show, not how far the run
    # got: at the longest, the walk took 295 process-seconds of a suite run, at the shortest
    # 121), the last value of any other nuisance.
    nuisance = {
        name: min(values) if name in ("steps", "epochs") else values[-1]
        for name, values in variant.nuisance.items()
    }
    knobs = resolve_knobs(get_drill(variant.drill), {**variant.base, **nuisance, **variant.knobs})
    # Seeds as long as real draws give (a short one matches any number on the page).
    drawn = RoundDraw(variant=variant, seed=1_234_567_000 + index, knobs=knobs)
    monkeypatch.setattr(rounds, "draw_round", lambda *_args, **_kw: drawn)
    round_id = start_round(client)
    run = wait_for_run(client, round_id, timeout=180)
    secrets = telltales(variant) | {str(drawn.seed), run.command.lower()}
    responses = {
        "page": client.get(f"/practice/rounds/{round_id}").text,
        "body": client.get(f"/practice/rounds/{round_id}/body").text,
        "list": client.get("/practice/rounds").text,
        "a 422": client.post(
            f"/practice/rounds/{round_id}/answer", data={"leading": "cause-1"}
        ).text,
    }
    with client.stream("GET", f"/practice/rounds/{round_id}/events") as stream:
        responses["events"] = "".join(stream.iter_text())
    # The list names the drills of rounds already answered, which may be this one's.
    drill_names = {variant.drill, get_drill(variant.drill).title.lower()}
    for where, text in responses.items():
        hidden = secrets - drill_names if where == "list" else secrets
        assert found_in(hidden, text) == [], (variant.key, where)
    if run.final and run.observed_hypothesis is not None:  # else a void round: nothing to answer
        assert answer(client, round_id, cause_of(variant).key).status_code == 303
