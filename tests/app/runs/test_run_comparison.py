"""Runs on shared axes: an attempt overlaid with the learner's other attempts of its drill
(`?compare=`), a submission's failed and fixed runs, and theory shown where it fits the run."""

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.accounts.models import Role
from app.runs import evidence
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import (
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_submission,
    add_unfinished_attempt,
    add_user,
    engine_of,
)
from tests.conftest import log_in


class Figures(HTMLParser):
    """The attributes of every <figure> of a page, by id."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, dict[str, str | None]] = {}

    @classmethod
    def of(cls, page: str) -> dict[str, dict[str, str | None]]:
        parser = cls()
        parser.feed(page)
        return parser.found

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "figure" and found.get("id"):
            self.found[str(found["id"])] = found


def runs_on(page: str, figure: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads(Figures.of(page)[figure].get("data-runs") or "[]")
    return runs


def add_points(engine: Engine, attempt_id: int, losses: list[float]) -> None:
    with Session(engine) as session:
        points = [("loss", step, value) for step, value in enumerate(losses)]
        evidence.insert_points(session, attempt_id=attempt_id, points=points)
        session.commit()


def add_case_run_of_the_drill(engine: Engine, learner_id: int) -> int:
    """A finished overfit-one-batch run made inside a case: never the learner's attempt."""
    case_attempt_id, _ = add_case_attempt(engine, learner_id)
    with Session(engine) as session:
        attempt = Attempt(
            learner_id=learner_id,
            drill_slug="overfit-one-batch",
            drill_version="2",
            hypothesis="",
            prediction_text="",
            knobs={"bug": "shuffled-labels"},
            seed=3,
            command="python -m drills run overfit-one-batch --set bug=shuffled-labels --seed 3",
            status=AttemptStatus.succeeded,
            case_attempt_id=case_attempt_id,
        )
        session.add(attempt)
        session.commit()
        assert attempt.id is not None
        return attempt.id


@pytest.fixture
def runs(anonymous: TestClient) -> dict[str, Any]:
    """Learner "lee" (logged in) with three finished attempts and points for each; another
    learner's attempt; a case run of the same drill; an unfinished attempt. The unfinished one
    names the app's scheduler, so the housekeeping (once a second) leaves it unfinished."""
    engine = engine_of(anonymous)
    scheduler = anonymous.app.state.runner.scheduler_id  # type: ignore[attr-defined]
    lee = add_user(engine, "lee")
    other = add_user(engine, "ola")
    ids = {
        "failed": add_attempt(engine, lee, fixed=False),
        "fixed": add_attempt(engine, lee, fixed=True),
        "latest": add_attempt(engine, lee, fixed=True),
        "someone_elses": add_attempt(engine, other, fixed=True),
        "case_run": add_case_run_of_the_drill(engine, lee),
        "unfinished": add_unfinished_attempt(engine, lee, scheduler_id=scheduler),
    }
    for name, losses in {"failed": [1.4, 1.39], "fixed": [1.4, 0.1], "latest": [1.3, 0.01]}.items():
        add_points(engine, ids[name], losses)
    add_points(engine, ids["case_run"], [1.4, 1.38])
    log_in(anonymous, "lee")
    return {"client": anonymous, "engine": engine, "lee": lee, "other": other, **ids}


def test_the_attempt_page_offers_the_learners_other_finished_attempts_only(
    runs: dict[str, Any],
) -> None:
    page = runs["client"].get(f"/attempts/{runs['latest']}").text
    offered = {int(v) for v in re.findall(r'name="compare" value="(\d+)"', page)}
    assert offered == {runs["failed"], runs["fixed"]}
    # Nothing chosen: the charts draw this run alone.
    assert runs_on(page, "chart-loss") == []


@pytest.mark.parametrize(
    "query", ["?compare={failed},{fixed}", "?compare={failed}&compare={fixed}"]
)
def test_chosen_attempts_are_drawn_on_every_chart_under_their_numbers(
    runs: dict[str, Any], query: str
) -> None:
    url = f"/attempts/{runs['latest']}" + query.format(**runs)
    page = runs["client"].get(url).text
    figures = Figures.of(page)
    for key in ("chart-loss", "chart-p_correct", "chart-grad_norm"):
        assert figures[key]["data-label"] == f"#{runs['latest']}"
        drawn = runs_on(page, key)
        assert [run["label"] for run in drawn] == [f"#{runs['failed']}", f"#{runs['fixed']}"]
    failed = runs_on(page, "chart-loss")[0]
    assert failed["series"] == {"loss": [[0, 1.4], [1, 1.39]]}
    # The chosen runs stay checked, so the form changes the choice rather than resetting it.
    assert f'value="{runs["failed"]}" checked' in page


@pytest.mark.parametrize("name", ["someone_elses", "case_run", "unfinished"])
def test_attempts_that_are_not_offered_are_refused_like_missing_ones(
    runs: dict[str, Any], name: str
) -> None:
    response = runs["client"].get(f"/attempts/{runs['latest']}?compare={runs[name]}")
    assert response.status_code == 404
    # Not a word of the refused run's data reaches the page.
    assert "1.38" not in response.text and "shuffled-labels --seed 3" not in response.text


def test_an_attempt_of_another_drill_is_refused(runs: dict[str, Any]) -> None:
    with Session(runs["engine"]) as session:
        attempt = session.get(Attempt, runs["fixed"])
        assert attempt is not None
        attempt.drill_slug = "lr-sweep"
        session.add(attempt)
        session.commit()
    response = runs["client"].get(f"/attempts/{runs['latest']}?compare={runs['fixed']}")
    assert response.status_code == 404


@pytest.mark.parametrize(
    "raw", ["abc", "0", "1,x", "-3", "1.5", "99999999999999999999", "1,2,3,4,5,6"]
)
def test_a_compare_query_that_is_not_attempt_numbers_is_a_422(
    runs: dict[str, Any], raw: str
) -> None:
    response = runs["client"].get(f"/attempts/{runs['latest']}", params={"compare": raw})
    assert response.status_code == 422
    assert "compare" in response.text


def test_the_run_itself_and_repeats_are_drawn_once(runs: dict[str, Any]) -> None:
    url = f"/attempts/{runs['latest']}?compare={runs['latest']},{runs['fixed']},{runs['fixed']}"
    page = runs["client"].get(url).text
    assert [run["label"] for run in runs_on(page, "chart-loss")] == [f"#{runs['fixed']}"]


def test_the_live_panel_keeps_the_comparison_when_it_refreshes(runs: dict[str, Any]) -> None:
    engine, lee = runs["engine"], runs["lee"]
    scheduler = runs["client"].app.state.runner.scheduler_id
    live = add_unfinished_attempt(engine, lee, status=AttemptStatus.running, scheduler_id=scheduler)
    # The unfinished run is the page's own run here: it may be compared with finished ones.
    page = runs["client"].get(f"/attempts/{live}?compare={runs['fixed']}").text
    assert f'hx-get="/attempts/{live}/panel?compare={runs["fixed"]}"' in page
    panel = runs["client"].get(f"/attempts/{live}/panel?compare={runs['fixed']}").text
    assert [run["label"] for run in runs_on(panel, "chart-loss")] == [f"#{runs['fixed']}"]


def test_an_instructor_compares_the_attempts_of_a_learner_they_teach(
    runs: dict[str, Any],
) -> None:
    engine, client = runs["engine"], runs["client"]
    teacher = add_user(engine, "ida", Role.instructor)
    add_cohort(engine, teacher, name="Autumn", code="ABCDEFGH", learners=[runs["lee"]])
    add_user(engine, "sam", Role.instructor)
    log_in(client, "ida")
    url = f"/attempts/{runs['latest']}?compare={runs['failed']}"
    assert [r["label"] for r in runs_on(client.get(url).text, "chart-loss")] == [
        f"#{runs['failed']}"
    ]
    assert client.get(f"/attempts/{runs['latest']}?compare={runs['case_run']}").status_code == 404
    log_in(client, "sam")  # teaches nobody: the attempt itself is not theirs to read
    assert client.get(url).status_code == 404


def test_the_submission_page_draws_the_failed_and_fixed_runs_on_shared_axes(
    runs: dict[str, Any],
) -> None:
    engine, client = runs["engine"], runs["client"]
    submission = add_submission(engine, runs["lee"], runs["failed"], runs["fixed"])
    page = client.get(f"/submissions/{submission}").text
    figures = Figures.of(page)
    shared = sorted(key for key in figures if key.startswith("shared-"))
    assert shared == ["shared-grad_norm", "shared-loss", "shared-p_correct"]
    assert figures["shared-loss"]["data-label"] == f"fixed #{runs['fixed']}"
    assert json.loads(figures["shared-loss"]["data-series"] or "{}") == {
        "loss": [[0, 1.4], [1, 0.1]]
    }
    assert runs_on(page, "shared-loss") == [
        {"label": f"failed #{runs['failed']}", "series": {"loss": [[0, 1.4], [1, 1.39]]}}
    ]
    # The reviewer's view is the same page: an instructor of the learner sees the same charts.
    teacher = add_user(engine, "ida", Role.instructor)
    add_cohort(engine, teacher, name="Autumn", code="ABCDEFGH", learners=[runs["lee"]])
    log_in(client, "ida")
    review = client.get(f"/submissions/{submission}").text
    assert 'id="review"' in review
    assert runs_on(review, "shared-loss") == runs_on(page, "shared-loss")


def test_theory_stands_beside_the_hypothesis_it_belongs_to(runs: dict[str, Any]) -> None:
    # A clean run (final loss 0.002) by a learner who predicted shuffled labels.
    with Session(runs["engine"]) as session:
        attempt = session.get(Attempt, runs["fixed"])
        assert attempt is not None
        attempt.hypothesis = "labels-detached"
        session.add(attempt)
        session.commit()
    page = runs["client"].get(f"/attempts/{runs['fixed']}").text
    table = page.split('id="signature"', 1)[1].split("</table>", 1)[0]
    final_row = table.split("Final loss", 1)[1].split("</tr>", 1)[0]
    assert "1.386" not in final_row  # not what a clean run is expected to show
    beside = page.split('id="prediction-theory"', 1)[1].split("</table>", 1)[0]
    assert "Final loss" in beside and "1.386" in beside and "0.002" in beside
    # A learner who predicted the clean fit gets no such table.
    clean = runs["client"].get(f"/attempts/{runs['latest']}").text
    assert 'id="prediction-theory"' not in clean
