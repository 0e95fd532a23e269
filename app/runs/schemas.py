"""Shapes of the JSON API (request bodies and public views of records)."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.core.limits import MAX_PREDICTION, MAX_SEED

# A predicted number: JSON numbers only (no text, no true/false). NaN and infinities pass here
# and are refused by app.runs.attempts with the field's name: pydantic's own error would echo the
# NaN back, which JSON cannot carry.
PredictedNumber = Annotated[float, Field(strict=True)]


class AttemptCreate(BaseModel):
    drill: str = Field(max_length=64, description="Drill slug, e.g. overfit-one-batch")
    hypothesis: str = Field(max_length=64, description="Key of the leading hypothesis")
    prediction: str = Field(
        max_length=MAX_PREDICTION, description="What you expect to see, in a sentence"
    )
    knobs: dict[str, str | int | float | list[float]] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    numeric: dict[str, PredictedNumber] = Field(
        default_factory=dict,
        description="Predicted numbers by signature key, among the drill's numeric_predictions",
    )
    hidden_setup: bool = Field(
        default=False,
        strict=True,
        description="Hide the bug: the server draws the knobs and seed (send neither) and shows "
        "them once the run has ended",
    )

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_is_no_truth_value(cls, value: Any) -> Any:
        # pydantic reads `true` as 1 for an int: a seed is a number, never a yes or no.
        if isinstance(value, bool):
            raise ValueError("the seed must be a whole number, not true or false")
        return value


class SessionInfo(BaseModel):
    user_id: int
    username: str
    role: str
    csrf_token: str


class AttemptLinks(BaseModel):
    self: str
    events: str
    cancel: str
    page: str


class AttemptCreated(BaseModel):
    id: int
    status: str
    command: str | None = Field(description="The replay command; null while a hidden setup runs")
    urls: AttemptLinks


class AttemptFields(BaseModel):
    """An attempt's own columns as the API names them, read from the model (`model_validate`);
    the fields whose public name differs from the column say so by alias."""

    model_config = ConfigDict(from_attributes=True, populate_by_name=True)

    id: int
    drill: str = Field(validation_alias="drill_slug")
    drill_version: str
    hypothesis: str
    prediction: str = Field(validation_alias="prediction_text")
    predicted_at: datetime
    numeric_predictions: dict[str, float]
    # Null while a hidden-bug run is in flight (Attempt.setup_concealed): they name its setup.
    knobs: dict[str, Any] | None
    seed: int | None
    command: str | None
    hidden_setup: bool
    status: str
    error: str | None
    environment: dict[str, Any] | None
    inputs: dict[str, Any] | None
    diagnostics: dict[str, Any] | None
    signature: dict[str, Any] | None
    observed_hypothesis: str | None
    prediction_matched: bool | None
    numeric_matched: dict[str, bool | None] | None
    digest: str | None
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    compute_s: float | None
    cancel_requested_at: datetime | None


class AttemptPublic(AttemptFields):
    """An attempt with its metric series and links."""

    metrics: dict[str, list[list[Any]]]
    urls: AttemptLinks


def attempt_links(attempt_id: int) -> AttemptLinks:
    return AttemptLinks(
        self=f"/api/attempts/{attempt_id}",
        events=f"/api/attempts/{attempt_id}/events",
        cancel=f"/api/attempts/{attempt_id}/cancel",
        page=f"/attempts/{attempt_id}",
    )


class ErrorBody(BaseModel):
    """Every 4xx answer of the API: a message, or (422) a list of errors, each naming its field in
    `loc`."""

    detail: str | list[dict[str, Any]]


ERROR_MEANINGS = {
    400: "The body could not be parsed (for example JSON nested too deeply).",
    401: "Not logged in: log in through the form, then read the CSRF token from /api/session.",
    403: "Missing or wrong CSRF token: send it as X-CSRF-Token.",
    404: "No such drill or attempt, or one you may not read (answered alike).",
    409: "Not now, for the record's state: an attempt that has already ended cannot be "
    "cancelled; an exercise's solution comes after its last hint or a passing run.",
    413: "The body is larger than the server accepts (24 MB).",
    422: "A field is invalid (out of range, unknown, or text with NUL or a lone surrogate).",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: the error answers it really gives (tests/app/test_api.py
    checks each one against a request that gets it)."""
    return {code: {"model": ErrorBody, "description": ERROR_MEANINGS[code]} for code in codes}
