"""Turn raw knob values (CLI strings, form fields or JSON) into validated, typed values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from drills.core.contract import Drill, Knob

# A "float-list" holds at most this many numbers: each one is a separate training run.
MAX_LIST_VALUES = 6

KnobValue = int | float | str | tuple[float, ...]


class KnobError(ValueError):
    """A knob value the drill cannot accept; `.knob` names the knob (None if unnamed)."""

    def __init__(self, knob: str | None, problem: str) -> None:
        message = f"knob {knob!r}: {problem}" if knob is not None else problem
        super().__init__(message)
        self.knob = knob


def resolve_knobs(drill: Drill, raw: Mapping[str, object]) -> dict[str, Any]:
    """Validate `raw` against the drill's knobs and fill in defaults for the rest."""
    by_name = {knob.name: knob for knob in drill.knobs}
    for name in raw:
        if name not in by_name:
            known = ", ".join(sorted(by_name))
            raise KnobError(name, f"unknown knob for drill {drill.slug!r} (known: {known})")
    resolved: dict[str, Any] = {}
    for knob in drill.knobs:
        value = raw[knob.name] if knob.name in raw else knob.default
        resolved[knob.name] = resolve_knob(knob, value)
    return resolved


def resolve_knob(knob: Knob, value: object) -> KnobValue:
    if knob.kind == "float-list":
        return _as_float_list(knob, value)
    if knob.kind == "int":
        typed: int | float | str = _as_int(knob.name, value)
    elif knob.kind == "float":
        typed = _as_float(knob.name, value)
    else:
        typed = _as_choice(knob, value)
    if knob.choices is not None and typed not in knob.choices:
        allowed = ", ".join(str(choice) for choice in knob.choices)
        raise KnobError(knob.name, f"{value!r} is not one of: {allowed}")
    if isinstance(typed, int | float):
        _check_range(knob, typed)
    return typed


def _check_range(knob: Knob, number: int | float) -> None:
    if knob.minimum is not None and number < knob.minimum:
        raise KnobError(knob.name, f"{number!r} is below the minimum {knob.minimum!r}")
    if knob.maximum is not None and number > knob.maximum:
        raise KnobError(knob.name, f"{number!r} is above the maximum {knob.maximum!r}")


def _as_int(name: str, value: object) -> int:
    # bool is a subclass of int, and a float such as 1.5 would silently truncate: refuse both.
    if isinstance(value, bool) or isinstance(value, float):
        raise KnobError(name, f"expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise KnobError(name, f"expected an integer, got {value!r}") from None
    raise KnobError(name, f"expected an integer, got {type(value).__name__}")


def _as_float(name: str, value: object) -> float:
    if isinstance(value, bool):
        raise KnobError(name, f"expected a number, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise KnobError(name, f"expected a number, got {value!r}") from None
    else:
        raise KnobError(name, f"expected a number, got {type(value).__name__}")
    if not math.isfinite(number):
        raise KnobError(name, f"expected a finite number, got {value!r}")
    return number


def _as_choice(knob: Knob, value: object) -> int | float | str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise KnobError(knob.name, f"expected one of the listed choices, got {value!r}")
    for choice in knob.choices or ():
        # Strings from a form or the CLI match a choice by its text; JSON values by equality.
        if value == choice or (isinstance(value, str) and value.strip() == str(choice)):
            return choice
    allowed = ", ".join(str(choice) for choice in knob.choices or ())
    raise KnobError(knob.name, f"{value!r} is not one of: {allowed}")


def _as_float_list(knob: Knob, value: object) -> tuple[float, ...]:
    """Text such as "1e-6, 1e-4" (CLI, form) or a JSON list -> a tuple of floats, order kept."""
    items: list[object]
    if isinstance(value, str):
        items = list(value.split(",")) if value.strip() else []
    elif isinstance(value, list | tuple):
        items = list(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        items = [value]  # one number is a list of one
    else:
        raise KnobError(knob.name, f"expected comma-separated numbers, got {value!r}")
    if not items:
        raise KnobError(knob.name, "expected at least one number, got none")
    if len(items) > MAX_LIST_VALUES:
        raise KnobError(
            knob.name, f"at most {MAX_LIST_VALUES} numbers are allowed, got {len(items)}"
        )
    numbers: list[float] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, str) and not item.strip():
            raise KnobError(knob.name, f"number {position} of {value!r} is empty")
        number = _as_float(knob.name, item)
        _check_range(knob, number)
        # 0.01 and 1e-2 are the same number: running it twice would only repeat a curve.
        if number in numbers:
            raise KnobError(knob.name, f"{number!r} is listed twice")
        numbers.append(number)
    return tuple(numbers)
