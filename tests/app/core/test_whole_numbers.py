"""Numbers people send (form fields, query strings, keys in paths) are ASCII digits within their
range: anything else, "²" or a 4,400-digit number (past Python's int conversion limit), gets a
4xx naming the field, never a 500 (app/core/whole_numbers.py)."""

import pytest
from fastapi.testclient import TestClient

from app.accounts.models import Role
from app.cases.models import CaseStage
from app.core.whole_numbers import whole_number
from drills.practice.items import all_items
from tests.app.clock import Clock
from tests.app.factories import (
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_user,
    engine_of,
    page_token,
    signed_in,
)

HUGE = "9" * 4400  # past sys.get_int_max_str_digits() (4,300)
NOT_NUMBERS = [HUGE, "²", "٣", "1e3", "-1", " 7", ""]
FIRST = f"track:{all_items()[0].key}"


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_only_ascii_digits_within_the_maximum_are_numbers(text: str) -> None:
    assert whole_number(text, maximum=10**18) is None


def test_numbers_up_to_the_maximum_are_read() -> None:
    assert whole_number("0", maximum=5) == 0
    assert whole_number("5", maximum=5) == 5
    assert whole_number("6", maximum=5) is None
    assert whole_number("0005", maximum=9999) == 5
    assert whole_number(str(2**63 - 1), maximum=2**63 - 1) == 2**63 - 1


@pytest.mark.parametrize("raw", [HUGE, "²"])
def test_a_compare_query_of_no_number_is_a_422(client: TestClient, raw: str) -> None:
    engine = engine_of(client)
    attempt_id = add_attempt(engine, 2, fixed=True)  # learner-a is the second user
    for path in (f"/attempts/{attempt_id}", f"/attempts/{attempt_id}/panel"):
        response = client.get(path, params={"compare": raw})
        assert response.status_code == 422 and "compare" in response.text, path


@pytest.mark.parametrize("raw", [HUGE, "²"])
def test_a_review_count_of_no_number_is_not_a_500(
    client: TestClient, clock: Clock, raw: str
) -> None:
    answer = client.post(f"/practice/{FIRST}/answer", data={"answer": "x", "seen_reviews": raw})
    rating = client.post(
        f"/practice/{FIRST}/rating", data={"answer": "x", "rating": "good", "seen_reviews": raw}
    )
    assert answer.status_code < 500 and rating.status_code < 500


def test_a_cohort_item_key_of_thousands_of_digits_is_not_found(client: TestClient) -> None:
    assert client.get(f"/practice/cohort:{HUGE}").status_code == 404


@pytest.mark.parametrize("raw", [HUGE, "²"])
def test_a_failed_attempt_of_no_number_is_named(client: TestClient, raw: str) -> None:
    engine = engine_of(client)
    add_attempt(engine, 2, fixed=False)  # a failed run to pick, so the form is offered
    fixed = add_attempt(engine, 2, fixed=True)
    form = {
        "failed_attempt_id": raw,
        "fixed_attempt_id": str(fixed),
        "mechanism": "m",
        "right_tool": "r",
        "wrong_tool": "w",
        "next_check": "n",
    }
    response = client.post("/drills/overfit-one-batch/submissions", data=form)
    assert response.status_code == 422 and "pick one of your own attempts" in response.text


@pytest.mark.parametrize("raw", [HUGE, "²"])
def test_a_case_budget_of_no_number_is_named(anonymous: TestClient, raw: str) -> None:
    engine = engine_of(anonymous)
    teacher = add_user(engine, "teacher", Role.instructor)
    cohort = add_cohort(engine, teacher, name="Monday", code="MONDAY-1")
    instructor = signed_in(anonymous.app, "teacher")  # type: ignore[arg-type]
    response = instructor.post(f"/cohorts/{cohort}/case-budget", data={"case_budget": raw})
    assert response.status_code == 422 and "budget must be a whole number" in response.text


@pytest.mark.parametrize("raw", [f"cause-{HUGE}", "cause-²"])
def test_a_cause_of_no_number_is_named(client: TestClient, raw: str) -> None:
    case_attempt_id, _ = add_case_attempt(engine_of(client), 2, stage=CaseStage.diagnosing)
    data = {"leading": raw, "first_test": "update-sizes", "intervention": "x", "confirmation": "y"}
    response = client.post(f"/cases/attempts/{case_attempt_id}/diagnosis", data=data)
    assert response.status_code == 422 and 'id="error-leading"' in response.text


def test_an_export_holding_a_number_of_thousands_of_digits_is_unreadable(
    anonymous: TestClient,
) -> None:
    token = page_token(anonymous)
    body = ('{"statements": [' + HUGE + "]}").encode()
    response = anonymous.post(
        "/portfolio/verify",
        data={"csrf_token": token},
        files={"file": ("export.json", body, "application/json")},
    )
    assert response.status_code == 422 and "thousands of digits" in response.text
