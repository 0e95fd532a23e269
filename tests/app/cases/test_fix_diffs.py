"""After the verdict, a case's and a round's page show what the fix changes in the code that ran
(drills/core/source_diff.py): the cause's branch as removed lines, the fix's as added ones, the
knob values, all escaped; before the verdict the same page shows none of it. No run is executed:
the rows are written as a finished run leaves them (tests/app/factories.py)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.cases.models import CaseAttempt, CaseStage
from app.models.time import utcnow
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt
from drills.cases.contract import NO_CHANGE, Fix
from drills.cases.registry import get_case
from drills.core.knobs import resolve_knobs
from drills.core.registry import get_drill
from drills.practice import round_answers
from drills.practice.rounds import get_variant
from tests.app.factories import add_case_attempt, add_round, engine_of

# Both: the scaler's unscale_ called after the gradient norm is read (removed by the fix) instead
# of right after backward (added).
CASE, CAUSE = "a-loop-that-stands-still", "clipping-scaled-gradients"
VARIANT = "mixed-precision/norm-of-scaled-gradients"
REMOVED = "# Too late: the norm above was read, and clipped by, on the still-scaled gradients."
ADDED = "scaler.unscale_(optimizer)  # .grad now holds the gradient itself"


def learner_id(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def diff_lines(page: str, kind: str) -> list[str]:
    """The text of the diff's lines of one kind ("removed", "added"), as a reader sees it."""
    found = re.findall(rf'<span class="code-line diff-{kind}">(.*?)\n</span>', page, re.S)
    return [html.unescape(re.sub(r"<span[^>]*>[^<]*</span>", "", line)).strip() for line in found]


def stored(knobs: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(knobs))  # as the database gives them back
    return loaded


def case_attempt_on(engine: Engine, learner: int) -> int:
    """A case attempt of CASE that drew CAUSE, investigating: the factory's rows, re-planted."""
    case = get_case(CASE)
    drill = case.case_set.drill_object
    nuisance = {name: values[0] for name, values in case.case_set.nuisance.items()}
    knobs = resolve_knobs(drill, {**case.case_set.base, **nuisance, **case.cause(CAUSE).knobs})
    case_attempt_id, _ = add_case_attempt(engine, learner, stage=CaseStage.investigating)
    with Session(engine) as session:
        row = session.get(CaseAttempt, case_attempt_id)
        assert row is not None
        row.case_key, row.cause, row.knobs = CASE, CAUSE, stored(knobs)
        row.diagnosis = {
            "leading": CAUSE,
            "alternatives": [],
            "first_test": case.case_set.experiments[0].key,
            "intervention": "unscale first",
            "confirmation": "the loss falls",
        }
        run = session.exec(select(Attempt).where(Attempt.case_attempt_id == case_attempt_id)).one()
        run.drill_slug, run.knobs = drill.slug, stored(knobs)
        session.add_all([row, run])
        session.commit()
    return case_attempt_id


def reveal(engine: Engine, case_attempt_id: int) -> None:
    with Session(engine) as session:
        row = session.get(CaseAttempt, case_attempt_id)
        assert row is not None
        row.stage, row.named_cause, row.fix_key = CaseStage.revealed, CAUSE, "unscale-first"
        row.score = {"cause_named": True, "fix_verified": True, "points": 4, "experiments": []}
        row.revealed_at = utcnow()
        session.add(row)
        session.commit()


def round_on(engine: Engine, learner: int, variant_key: str = VARIANT) -> int:
    """A round of `variant_key`, not yet answered: the factory's rows, re-planted."""
    variant = get_variant(variant_key)
    nuisance = {name: values[0] for name, values in variant.nuisance.items()}
    knobs = resolve_knobs(get_drill(variant.drill), {**variant.base, **nuisance, **variant.knobs})
    round_id = add_round(engine, learner, answered=False)
    with Session(engine) as session:
        row = session.get(DiagnosisRound, round_id)
        assert row is not None
        row.variant_key, row.drill_slug, row.knobs = variant.key, variant.drill, stored(knobs)
        run = session.exec(select(Attempt).where(Attempt.round_id == round_id)).one()
        run.drill_slug, run.knobs = variant.drill, stored(knobs)
        session.add_all([row, run])
        session.commit()
    return round_id


def answer(engine: Engine, round_id: int) -> None:
    with Session(engine) as session:
        row = session.get(DiagnosisRound, round_id)
        assert row is not None
        cause = row.variant_key.split("/", 1)[1]
        row.diagnosis = {
            "leading": cause,
            "alternatives": [],
            "first_test": "",
            "intervention": "put it back",
            "confirmation": "it trains",
        }
        row.score = {
            "leading_right": True,
            "cause_named": True,
            "test_separates": False,
            "would_have": [],
            "points": 1,
            "observed": "",
        }
        row.answered_at = utcnow()
        session.add(row)
        session.commit()


def test_a_case_shows_the_fix_as_a_diff_only_after_the_verdict(client: TestClient) -> None:
    engine = engine_of(client)
    case_attempt_id = case_attempt_on(engine, learner_id(client))
    before = [
        client.get(f"/cases/attempts/{case_attempt_id}").text,
        client.get(f"/cases/attempts/{case_attempt_id}/body").text,
    ]
    for page in before:
        assert 'id="code-diff"' not in page
        assert REMOVED not in page and ADDED not in page
        assert not diff_lines(page, "removed") and not diff_lines(page, "added")

    reveal(engine, case_attempt_id)
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert 'id="code-diff"' in page
    assert REMOVED in diff_lines(page, "removed")
    assert ADDED in diff_lines(page, "added")
    # The knob values, escaped like every line (the code's quotes are no markup).
    assert 'unscale = "late"' in diff_lines(page, "removed")
    assert 'unscale = "first"' in diff_lines(page, "added")
    assert "unscale = &#34;late&#34;" in page and 'unscale = "late"' not in page
    assert "drills/catalog/mixed_precision/train.py" in page
    # The body partial an htmx swap gets shows the same.
    body = client.get(f"/cases/attempts/{case_attempt_id}/body").text
    assert diff_lines(body, "added") == diff_lines(page, "added")


def test_a_round_shows_the_model_fix_as_a_diff_only_once_answered(client: TestClient) -> None:
    engine = engine_of(client)
    round_id = round_on(engine, learner_id(client))
    for path in (f"/practice/rounds/{round_id}", f"/practice/rounds/{round_id}/body"):
        page = client.get(path).text
        assert 'id="code-diff"' not in page and REMOVED not in page and ADDED not in page
        assert not diff_lines(page, "removed") and not diff_lines(page, "added")

    answer(engine, round_id)
    page = client.get(f"/practice/rounds/{round_id}").text
    assert 'id="code-diff"' in page
    assert REMOVED in diff_lines(page, "removed")
    assert ADDED in diff_lines(page, "added")
    assert 'id="diff-against-defaults"' not in page


def test_a_round_with_nothing_planted_says_there_is_nothing_to_change(client: TestClient) -> None:
    engine = engine_of(client)
    round_id = round_on(engine, learner_id(client), "mixed-precision/scaler-working")
    answer(engine, round_id)
    page = client.get(f"/practice/rounds/{round_id}").text
    assert 'id="diff-nothing"' in page
    assert not diff_lines(page, "removed") and not diff_lines(page, "added")


def test_a_round_whose_fix_changes_nothing_is_diffed_against_the_defaults(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(round_answers, "model_fix", lambda _: Fix("none", "Nothing.", NO_CHANGE))
    engine = engine_of(client)
    round_id = round_on(engine, learner_id(client))
    answer(engine, round_id)
    page = client.get(f"/practice/rounds/{round_id}").text
    assert 'id="diff-against-defaults"' in page
    assert ADDED in diff_lines(page, "added")  # "first" is the drill's default
