"""Text the database cannot store (a lone surrogate, NUL) is refused once, for every request:
422 naming the field, whether it came in a form, a query or a JSON body; nothing is stored."""

import pytest
from fastapi.testclient import TestClient

from app.security.text import json_strings, text_problem
from tests.app.factories import row_counts, visitor
from tests.conftest import PASSWORD


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("plain", None),
        ("emoji \U0001f600 and ünïcode", None),
        ("a\x00b", "NUL"),
        ("\ud800", "lone surrogate"),
        ("x\udfff", "lone surrogate"),
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    found = text_problem(text)
    assert (found is None) if problem is None else (problem in (found or ""))


def test_json_strings_walks_any_depth_without_recursion() -> None:
    deep: object = "leaf"
    for _ in range(10_000):
        deep = [deep]
    [(location, text)] = list(json_strings({"k": deep}, ["body"]))
    assert text == "leaf" and location[:2] == ["body", "k"] and len(location) == 10_002


def test_a_nul_in_a_form_field_is_a_422_naming_it(anonymous: TestClient) -> None:
    browser = visitor(anonymous.app)  # type: ignore[arg-type]
    before = row_counts(anonymous.app.state.engine)  # type: ignore[attr-defined]
    form = {
        "username": "sam",
        "display_name": "Sam\x00",
        "password": PASSWORD,
        "password_again": PASSWORD,
    }
    response = browser.post("/register", data=form, follow_redirects=False)
    assert response.status_code == 422
    assert "display_name:" in response.text and "NUL" in response.text
    assert row_counts(anonymous.app.state.engine) == before  # type: ignore[attr-defined]


def test_a_nul_in_a_query_is_a_422_naming_it(client: TestClient) -> None:
    response = client.get("/drills/overfit-one-batch/history", params={"page": "1\x00"})
    assert response.status_code == 422
    assert "<li>page:" in response.text
