"""Numeric predictions through the app: stored with the attempt, scored when the run finishes by
a real worker, shown on the attempt page, in the API and in the portfolio export; bad input is
refused with a 422 that names the field, and stores nothing."""

import math
import re

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.runs.models import Attempt
from tests.conftest import PREDICTION, wait_until_final

HTMX = {"HX-Request": "true"}


def attempt_count(client: TestClient) -> int:
    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        return session.exec(select(func.count()).select_from(Attempt)).one()


def text_of(page: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}">([^<]*)<', page)
    assert match is not None, f"no #{element_id} on the page"
    return match.group(1)


def test_a_number_predicted_through_the_api_is_stored_scored_shown_and_exported(
    client: TestClient,
) -> None:
    created = client.post(
        "/api/attempts",
        json={
            "drill": "overfit-one-batch",
            **PREDICTION,
            "knobs": {"bug": "shuffled-labels"},
            "numeric": {"final_loss": 1.39},  # ln 4: the entropy of 8 labels, 2 per class
        },
    )
    assert created.status_code == 202, created.text
    attempt = wait_until_final(client, created.json()["id"])
    assert attempt["status"] == "succeeded", attempt["error"]
    assert attempt["numeric_predictions"] == {"final_loss": 1.39}
    assert attempt["numeric_matched"] == {"final_loss": True}
    assert attempt["prediction_matched"] is False  # the hypothesis "fits" missed; the number not

    page = client.get(f"/attempts/{attempt['id']}").text
    observed = attempt["signature"]["final_loss"]
    assert text_of(page, "numeric-final_loss") == (
        f"You predicted 1.39 nats; the loss settled at {observed:.4g} "
        "(within ±0.1 or ±15%, whichever is wider: matched)."
    )

    document = client.get("/portfolio/export.json").json()
    (statement,) = [s for s in document["statements"] if s["id"].endswith(f":{attempt['id']}")]
    assert statement["result"]["prediction"]["numeric"] == {"final_loss": 1.39}
    assert statement["result"]["numeric_matched"] == {"final_loss": True}


def test_a_number_predicted_on_the_page_form_is_scored_exactly(client: TestClient) -> None:
    page = client.get("/drills/nan-hunt").text
    assert 'name="numeric.first_nonfinite_step"' in page and "matched only if exact" in page
    assert "At which step does the first non-finite value appear?" in page
    response = client.post(
        "/drills/nan-hunt/attempts",
        data={
            "hypothesis": "bad-data",
            "prediction": "The NaN is in the batch at step 40.",
            "knob.cause": "nan-in-data",
            "seed": "3",
            "numeric.first_nonfinite_step": "41",
        },
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    attempt_id = int(response.headers["location"].rsplit("/", 1)[1])
    attempt = wait_until_final(client, attempt_id)
    assert attempt["numeric_predictions"] == {"first_nonfinite_step": 41.0}
    assert attempt["numeric_matched"] == {"first_nonfinite_step": False}
    assert attempt["prediction_matched"] is True
    final = client.get(f"/attempts/{attempt_id}/panel", headers=HTMX).text
    assert text_of(final, "numeric-first_nonfinite_step") == (
        "You predicted 41; the first non-finite value appeared at step 40 (exactly: missed)."
    )


def test_a_blank_number_predicts_nothing_and_a_clean_run_scores_nothing(
    client: TestClient,
) -> None:
    fields = {"hypothesis": "clean", "prediction": "Nothing breaks.", "knob.cause": "none"}
    blank = client.post(
        "/drills/nan-hunt/attempts",
        data=fields | {"numeric.first_nonfinite_step": " "},
        follow_redirects=False,
    )
    assert blank.status_code == 303
    assert (
        wait_until_final(client, int(blank.headers["location"].rsplit("/", 1)[1]))[
            "numeric_predictions"
        ]
        == {}
    )
    guessed = client.post(
        "/api/attempts",
        json={
            "drill": "nan-hunt",
            "hypothesis": "clean",
            "prediction": "Nothing breaks.",
            "numeric": {"first_nonfinite_step": 40},
        },
    )
    attempt = wait_until_final(client, guessed.json()["id"])
    assert attempt["numeric_matched"] == {"first_nonfinite_step": None}
    page = client.get(f"/attempts/{attempt['id']}").text
    assert text_of(page, "numeric-first_nonfinite_step") == (
        "You predicted 40; the run reported no such number (not scored)."
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"final_loss": NaN}', "final_loss"),
        ('{"final_loss": Infinity}', "final_loss"),
        ('{"final_loss": "0.7"}', "final_loss"),
        ('{"final_loss": true}', "final_loss"),
        ('{"final_loss": null}', "final_loss"),
        ('{"label_entropy": 1.4}', "label_entropy"),  # a signature field, but not asked for
        ('{"bogus": 1}', "bogus"),
    ],
)
def test_the_api_refuses_a_bad_number_naming_it_and_stores_nothing(
    client: TestClient, body: str, field: str
) -> None:
    before = attempt_count(client)
    response = client.post(
        "/api/attempts",
        content=(
            '{"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "zero",'
            f' "numeric": {body}}}'
        ),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422, response.text
    locations = [error["loc"] for error in response.json()["detail"]]
    assert ["body", "numeric", field] in locations
    assert attempt_count(client) == before


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("numeric.final_loss", "about 0.7"),
        ("numeric.final_loss", "nan"),
        ("numeric.final_loss", "1e999"),
        ("numeric.bogus", "1"),
    ],
)
def test_the_form_refuses_a_bad_number_naming_it_and_stores_nothing(
    client: TestClient, name: str, value: str
) -> None:
    before = attempt_count(client)
    response = client.post(
        "/drills/overfit-one-batch/attempts",
        data={"hypothesis": "fits", "prediction": "zero", name: value},
        headers=HTMX,
    )
    assert response.status_code == 422
    key = name.split(".", 1)[1]
    assert f'id="error-numeric-{key}"' in response.text
    assert attempt_count(client) == before


def test_an_unknown_key_from_the_form_is_named_in_the_error(client: TestClient) -> None:
    response = client.post(
        "/drills/overfit-one-batch/attempts",
        data={"hypothesis": "fits", "prediction": "zero", "numeric.bogus": "1"},
    )
    assert response.status_code == 422
    assert "bogus" in response.text


def test_finite_check_is_the_services_too() -> None:
    from app.runs.attempt_requests import AttemptRequest, InvalidAttempt, validate
    from drills.core.registry import get_drill

    request = AttemptRequest("fits", "zero", {}, 0, numeric={"final_loss": math.nan})
    with pytest.raises(InvalidAttempt) as refused:
        validate(get_drill("overfit-one-batch"), request)
    assert refused.value.field == "numeric.final_loss"
