"""A drill run's page shows the code that ran, once the run has ended, with its variant's lines
marked; a run still going shows none (the learner predicts first)."""

import re

from fastapi.testclient import TestClient

from tests.app.factories import add_attempt, add_unfinished_attempt, engine_of


def learner_id(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def test_an_ended_run_shows_its_code_with_the_variants_lines_marked(client: TestClient) -> None:
    attempt = add_attempt(engine_of(client), learner_id(client), fixed=False)  # shuffled labels
    page = client.get(f"/attempts/{attempt}").text
    assert 'id="run-code"' in page and "drills/catalog/overfit_one_batch/train.py" in page
    marked = re.findall(r'<span class="code-line bug-line"[^>]*>(.*?)\n</span>', page, re.S)
    assert marked and any("randperm" in line for line in marked)
    healthy = add_attempt(engine_of(client), learner_id(client), fixed=True)
    healthy_page = client.get(f"/attempts/{healthy}").text
    assert 'id="run-code"' in healthy_page and "bug-line" not in healthy_page


def test_a_run_still_going_shows_no_code(client: TestClient) -> None:
    # On this app's scheduler, so its housekeeping leaves the run alone: with the factory's
    # "earlier scheduler", the leader ended it before the page was read on a loaded machine.
    scheduler = client.app.state.runner.scheduler_id  # type: ignore[attr-defined]
    attempt = add_unfinished_attempt(engine_of(client), learner_id(client), scheduler_id=scheduler)
    assert 'id="run-code"' not in client.get(f"/attempts/{attempt}").text


def test_a_case_shows_its_causes_code_only_once_revealed(client: TestClient) -> None:
    from app.cases.models import CaseStage
    from tests.app.factories import add_case_attempt

    engine = engine_of(client)
    revealed, _ = add_case_attempt(engine, learner_id(client))
    page = client.get(f"/cases/attempts/{revealed}").text
    assert 'id="run-code"' in page and "bug-line" in page
    still_open, _ = add_case_attempt(
        engine, learner_id(client), stage=CaseStage.investigating, number=2
    )
    assert 'id="run-code"' not in client.get(f"/cases/attempts/{still_open}").text


def test_a_round_shows_its_runs_code_only_once_answered(client: TestClient) -> None:
    from tests.app.factories import add_round

    engine = engine_of(client)
    answered = add_round(engine, learner_id(client))
    page = client.get(f"/practice/rounds/{answered}").text
    assert 'id="run-code"' in page
    still_open = add_round(engine, learner_id(client), answered=False, number=2)
    assert 'id="run-code"' not in client.get(f"/practice/rounds/{still_open}").text
