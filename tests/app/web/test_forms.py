"""Form posts are bounded: too many fields, a field name or value past its cap is refused (413
naming the field) while it streams in, before any handler sees it."""

import html
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.web.forms import MAX_FIELD_CHARS, MAX_FIELDS
from tests.app.factories import page_token


def register(client: TestClient, **fields: str) -> Any:
    form = {
        "username": "newcomer",
        "display_name": "New Comer",
        "password": "a long enough password",
        "password_again": "a long enough password",
        "csrf_token": page_token(client),
    }
    return client.post("/register", data=form | fields)


@pytest.mark.parametrize(
    ("field", "length"),
    [("username", 257), ("password", 1025), ("display_name", MAX_FIELD_CHARS + 1)],
)
def test_a_field_past_its_cap_is_refused_by_name(
    anonymous: TestClient, field: str, length: int
) -> None:
    refused = register(anonymous, **{field: "x" * length})
    assert refused.status_code == 413
    detail = f"The field {field!r} is longer than {length - 1} characters."
    assert html.escape(detail, quote=False).replace("'", "&#39;") in refused.text  # on a page


def test_a_field_at_its_cap_reaches_the_form_in_any_characters(anonymous: TestClient) -> None:
    # 20,000 emoji are 240,000 bytes percent-encoded: still within the cap, so the registration
    # itself answers (the display name is too long for an account).
    answered = register(anonymous, display_name="\N{GRINNING FACE}" * MAX_FIELD_CHARS)
    assert answered.status_code == 422
    assert "use at most 120 characters" in answered.text


def test_multipart_fields_have_the_same_caps(anonymous: TestClient) -> None:
    fields = {"username": "u" * 100_000, "password": "x", "csrf_token": page_token(anonymous)}
    refused = anonymous.post(
        "/login", files={name: (None, value) for name, value in fields.items()}
    )
    assert refused.status_code == 413
    assert "The field &#39;username&#39; is longer than 256 characters." in refused.text


def test_too_many_fields_or_a_huge_field_name_are_refused(anonymous: TestClient) -> None:
    token = page_token(anonymous)
    many = {f"f{i}": "1" for i in range(MAX_FIELDS)} | {"csrf_token": token}
    assert anonymous.post("/login", data=many).status_code == 400
    named = anonymous.post("/login", data={"n" * 10_000: "1", "csrf_token": token})
    assert named.status_code == 413
