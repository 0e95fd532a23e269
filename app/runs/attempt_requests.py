"""A run request and its validation: every field checked before anything is stored, each bad
one named (e.g. "knobs.lr", "seed", "request_key") so a form can show them all at once."""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.limits import MAX_PREDICTION, MAX_SEED
from app.web.field_errors import ErrorCollector, FieldErrors
from app.web.request_keys import validated_key
from drills.core.contract import Drill
from drills.core.knobs import KnobError, resolve_knob, resolve_knobs


class InvalidAttempt(FieldErrors):
    """Fields of an attempt request are wrong; `errors` names each (e.g. "knobs.lr", "seed")."""


@dataclass(frozen=True)
class AttemptRequest:
    hypothesis: str
    prediction: str
    knobs: Mapping[str, object]
    seed: object
    # {signature key: number}; from a form the numbers are text, and an empty one predicts nothing.
    numeric: Mapping[str, object] = field(default_factory=dict)
    # The request's one-time key: sent again, it answers with the run it started. None or "": none.
    key: str | None = None


@dataclass(frozen=True)
class ValidAttempt:
    knobs: dict[str, Any]
    seed: int
    numeric: dict[str, float]
    key: str | None = None


def _validated_seed(raw: object) -> int:
    if isinstance(raw, bool):
        raise InvalidAttempt("seed", "seed must be a whole number")
    try:
        seed = int(raw) if isinstance(raw, int | str) else int(str(raw))
    except ValueError:
        raise InvalidAttempt("seed", f"seed must be a whole number, not {raw!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise InvalidAttempt("seed", f"seed must be between 0 and {MAX_SEED}")
    return seed


def _validated_numeric(drill: Drill, raw: Mapping[str, object]) -> dict[str, float]:
    """The drill's declared numeric predictions, as finite floats; blank form fields dropped."""
    problems = ErrorCollector()
    numbers: dict[str, float] = {}
    for key, value in raw.items():
        with problems.checking():
            number = _validated_number(drill, key, value)
            if number is not None:
                numbers[key] = number
    problems.raise_if_any(InvalidAttempt)
    return numbers


def _validated_number(drill: Drill, key: str, value: object) -> float | None:
    name = f"numeric.{key}"
    if key not in {prediction.key for prediction in drill.numeric_predictions}:
        raise InvalidAttempt(name, f"drill {drill.slug!r} asks for no number named {key!r}")
    if isinstance(value, str):  # a form field
        if not value.strip():
            return None
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            raise InvalidAttempt(name, f"{text[:40]!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidAttempt(name, "the prediction must be a number")
    if not math.isfinite(value):
        raise InvalidAttempt(name, "the prediction must be a finite number")
    return float(value)


def _validated_knobs(drill: Drill, raw: Mapping[str, object]) -> dict[str, Any]:
    """Each knob checked on its own, so every bad one is named; then resolved as a whole."""
    problems = ErrorCollector()
    by_name = {knob.name: knob for knob in drill.knobs}
    for name, value in raw.items():
        if name not in by_name:
            known = ", ".join(sorted(by_name))
            unknown = KnobError(name, f"unknown knob for drill {drill.slug!r} (known: {known})")
            problems.add(f"knobs.{name}", str(unknown))
            continue
        try:
            resolve_knob(by_name[name], value)
        except KnobError as error:
            problems.add(f"knobs.{name}", str(error))
    problems.raise_if_any(InvalidAttempt)
    try:
        return resolve_knobs(drill, raw)
    except KnobError as error:
        raise InvalidAttempt(f"knobs.{error.knob}" if error.knob else "knobs", str(error)) from None


def validate(drill: Drill, request: AttemptRequest) -> ValidAttempt:
    """Return the resolved knobs, seed and numeric predictions, or raise InvalidAttempt naming
    every bad field."""
    problems = ErrorCollector()
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    if not request.hypothesis:
        problems.add("hypothesis", "pick a leading hypothesis before running")
    elif request.hypothesis not in keys:
        problems.add(
            "hypothesis", f"unknown hypothesis {request.hypothesis!r} for drill {drill.slug!r}"
        )
    prediction = request.prediction.strip()
    if not prediction:
        problems.add("prediction", "write what you expect to see before running")
    elif len(prediction) > MAX_PREDICTION:
        problems.add("prediction", f"the prediction is longer than {MAX_PREDICTION} characters")
    numeric: dict[str, float] = {}
    with problems.checking():
        numeric = _validated_numeric(drill, request.numeric)
    knobs: dict[str, Any] = {}
    with problems.checking():
        knobs = _validated_knobs(drill, request.knobs)
    seed = 0
    with problems.checking():
        seed = _validated_seed(request.seed)
    key = None
    with problems.checking():
        key = validated_key(request.key)
    problems.raise_if_any(InvalidAttempt)
    return ValidAttempt(knobs, seed, numeric, key)
