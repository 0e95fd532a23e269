"""A form sent back shows every error at once, each beside its field: the field carries
aria-invalid and aria-describedby naming the id of its message (issue 12, item 7)."""

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.accounts.models import Role, User
from app.cases.forms import parse_verdict
from app.cases.models import CaseStage
from app.core.config import Settings
from app.diagnosis.form import InvalidCaseInput, parse_diagnosis
from app.grading.rubric import InvalidReview, parse_review
from app.main import create_app
from app.runs.models import Attempt
from drills.cases.registry import get_case
from drills.core.registry import get_drill
from tests.app.factories import (
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_submission,
    add_user,
    page_token,
    signed_in,
)

HTMX = {"HX-Request": "true"}


class _Fields(HTMLParser):
    """Each invalid field's name (or id) -> its aria-describedby; each id -> its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.invalid: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("aria-invalid") == "true":
            name = values.get("name") or values.get("id") or tag
            self.invalid.setdefault(name, values.get("aria-describedby") or "")
        if tag == "p" and values.get("id"):
            self._open.append(values["id"] or "")
            self.texts[values["id"] or ""] = ""

    def handle_data(self, data: str) -> None:
        if self._open:
            self.texts[self._open[-1]] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._open:
            self._open.pop()


def errors_shown(html: str) -> dict[str, str]:
    """Invalid field -> the message it points at. Fails if a field points at no message."""
    parser = _Fields()
    parser.feed(html)
    shown = {}
    for name, described_by in parser.invalid.items():
        assert described_by in parser.texts, f"{name} points at {described_by!r}: no such id"
        shown[name] = parser.texts[described_by].strip()
    return shown


@pytest.fixture
def world(make_settings: Callable[..., Settings]) -> Any:
    """An instructor with a cohort holding one learner, each in a browser of their own."""
    app = create_app(make_settings())
    with TestClient(app):
        engine = app.state.engine
        teacher = add_user(engine, "ida", Role.instructor)
        learner = add_user(engine, "lee")
        cohort = add_cohort(engine, teacher, name="Autumn", code="ABCDEFGH", learners=[learner])
        yield {
            "app": app,
            "engine": engine,
            "learner_id": learner,
            "cohort": cohort,
            "learner": signed_in(app, "lee"),
            "instructor": signed_in(app, "ida"),
        }


def test_registration_names_every_bad_field_at_once(anonymous: TestClient) -> None:
    form = {
        "username": "No!",
        "display_name": "x" * 121,
        "password": "short",
        "password_again": "different",
        "csrf_token": page_token(anonymous),
    }
    refused = anonymous.post("/register", data=form)
    assert refused.status_code == 422
    shown = errors_shown(refused.text)
    assert set(shown) == {"username", "display_name", "password", "password_again"}
    assert shown["password_again"] == "the two passwords differ"
    assert shown["display_name"] == "use at most 120 characters"
    with Session(anonymous.app.state.engine) as session:  # type: ignore[attr-defined]
        assert session.exec(select(func.count()).select_from(User)).one() == 1  # the local one


def test_a_failed_login_marks_both_fields(anonymous: TestClient) -> None:
    token = page_token(anonymous)
    refused = anonymous.post(
        "/login", data={"username": "nobody", "password": "wrong", "csrf_token": token}
    )
    assert refused.status_code == 401
    assert errors_shown(refused.text) == {
        "username": "Wrong username or password.",
        "password": "Wrong username or password.",
    }


def test_the_run_form_names_every_bad_field_and_comes_back_alone(world: Any) -> None:
    learner = world["learner"]
    refused = learner.post(
        "/drills/overfit-one-batch/attempts",
        data={
            "prediction": " ",
            "knob.lr": "-3",
            "knob.examples": "7",
            "seed": "-1",
            "numeric.final_loss": "about zero",
        },
        headers=HTMX,
    )
    assert refused.status_code == 422 and refused.headers["HX-Retarget"] == "#attempt-form"
    shown = errors_shown(refused.text)
    assert set(shown) == {
        "hypothesis",
        "prediction",
        "knob.lr",
        "knob.examples",
        "seed",
        "numeric.final_loss",
    }
    assert "below the minimum" in shown["knob.lr"]
    assert shown["numeric.final_loss"] == "'about zero' is not a number"
    # Every radio of the hypothesis group is marked, all pointing at the one message.
    hypotheses = len(get_drill("overfit-one-batch").hypotheses)
    assert refused.text.count('aria-describedby="error-hypothesis"') == hypotheses
    with Session(world["engine"]) as session:
        assert session.exec(select(func.count()).select_from(Attempt)).one() == 0


def test_the_api_lists_every_bad_field_too(world: Any) -> None:
    refused = world["learner"].post(
        "/api/attempts",
        json={
            "drill": "overfit-one-batch",
            "hypothesis": "",
            "prediction": "",
            "knobs": {"lr": -3},
        },
    )
    assert refused.status_code == 422
    locations = [error["loc"] for error in refused.json()["detail"]]
    assert locations == [["body", "hypothesis"], ["body", "prediction"], ["body", "knobs", "lr"]]


def test_explain_back_names_every_missing_part(world: Any) -> None:
    attempt = add_attempt(world["engine"], world["learner_id"], fixed=True)
    refused = world["learner"].post(
        f"/attempts/{attempt}/explanation", data={"mechanism": "it memorised"}, headers=HTMX
    )
    assert refused.status_code == 422
    assert errors_shown(refused.text) == {
        "right_tool": "required",
        "wrong_tool": "required",
        "next_check": "required",
    }


def test_a_submission_names_every_bad_field_at_once(world: Any) -> None:
    add_attempt(world["engine"], world["learner_id"], fixed=True)  # the form shows with both
    failed = add_attempt(world["engine"], world["learner_id"], fixed=False)
    refused = world["learner"].post(
        "/drills/overfit-one-batch/submissions",
        data={"failed_attempt_id": "x", "fixed_attempt_id": str(failed), "mechanism": "why"},
    )
    assert refused.status_code == 422
    shown = errors_shown(refused.text)
    assert set(shown) == {
        "failed_attempt_id",
        "fixed_attempt_id",
        "right_tool",
        "wrong_tool",
        "next_check",
    }
    assert "your own attempts" in shown["failed_attempt_id"]
    assert "does not show a healthy run" in shown["fixed_attempt_id"]


def test_a_review_names_every_unscored_criterion_and_the_missing_comment(world: Any) -> None:
    engine = world["engine"]
    failed = add_attempt(engine, world["learner_id"], fixed=False)
    fixed = add_attempt(engine, world["learner_id"], fixed=True)
    submission = add_submission(engine, world["learner_id"], failed, fixed)
    refused = world["instructor"].post(
        f"/submissions/{submission}/reviews",
        data={"decision": "changes_requested", "score.connects": "2"},
    )
    assert refused.status_code == 422
    shown = errors_shown(refused.text)
    assert set(shown) == {
        "score.mechanism",
        "score.when_to_use",
        "score.honest_prediction",
        "comment",
    }
    assert shown["comment"] == "say what to change"
    assert 'value="2"\n             checked' in refused.text  # the score given is kept


def test_the_rubric_parser_collects_every_problem() -> None:
    rubric = (("a", "A"), ("b", "B"))
    with pytest.raises(InvalidReview) as refused:
        parse_review({"decision": "maybe", "comment.b": "x" * 5000}, rubric)
    assert list(refused.value.errors) == ["decision", "score.a", "score.b", "comment.b"]
    assert refused.value.field == "decision"  # the first, in the form's order


def test_the_case_forms_collect_every_problem() -> None:
    case = get_case("a-fresh-head")
    with pytest.raises(InvalidCaseInput) as diagnosis:
        parse_diagnosis(case.case_set, {"alternatives": ["no-such-cause"], "intervention": " "})
    assert list(diagnosis.value.errors) == [
        "leading",
        "alternatives",
        "first_test",
        "intervention",
        "confirmation",
    ]
    with pytest.raises(InvalidCaseInput) as verdict:
        parse_verdict(case, {})
    assert list(verdict.value.errors) == ["cause", "fix"]


def test_the_case_diagnosis_comes_back_with_every_error(world: Any) -> None:
    case_attempt, _run = add_case_attempt(
        world["engine"], world["learner_id"], stage=CaseStage.diagnosing
    )
    refused = world["learner"].post(
        f"/cases/attempts/{case_attempt}/diagnosis", data={"intervention": "x"}, headers=HTMX
    )
    assert refused.status_code == 422
    shown = errors_shown(refused.text)
    assert set(shown) == {"leading", "first_test", "confirmation"}
    assert shown["leading"] == "pick your leading hypothesis from the list"


def test_cohort_forms_mark_their_field(world: Any) -> None:
    instructor = world["instructor"]
    unnamed = instructor.post("/cohorts", data={"name": "  "})
    assert unnamed.status_code == 422
    assert set(errors_shown(unnamed.text)) == {"name"}
    budget = instructor.post(f"/cohorts/{world['cohort']}/case-budget", data={"case_budget": "0"})
    assert budget.status_code == 422
    assert set(errors_shown(budget.text)) == {"case_budget"}
    unknown = world["learner"].post("/cohorts/join", data={"code": "NOPE"}, follow_redirects=True)
    assert errors_shown(unknown.text) == {"code": "No cohort has that code."}


def test_a_page_without_errors_marks_nothing(world: Any) -> None:
    assert errors_shown(world["learner"].get("/drills/overfit-one-batch").text) == {}
    assert errors_shown(world["learner"].get("/register").text) == {}
