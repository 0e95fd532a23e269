import math

import pytest

from drills.knobs import KnobError, resolve_knobs
from drills.registry import get_drill

drill = get_drill("overfit-one-batch")
DEFAULTS = {"bug": "none", "examples": 8, "lr": 1e-2, "steps": 200}


def test_defaults_fill_every_knob() -> None:
    assert resolve_knobs(drill, {}) == DEFAULTS


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"examples": "5"}, {"examples": 5}),
        ({"examples": 2}, {"examples": 2}),
        ({"lr": "3e-4"}, {"lr": 3e-4}),
        ({"lr": 1}, {"lr": 1.0}),
        ({"steps": " 50 "}, {"steps": 50}),
        ({"bug": "all-padding"}, {"bug": "all-padding"}),
    ],
)
def test_strings_and_json_values_become_typed_values(
    raw: dict[str, object], expected: dict[str, object]
) -> None:
    resolved = resolve_knobs(drill, raw)
    assert resolved == DEFAULTS | expected
    for name, value in expected.items():
        assert type(resolved[name]) is type(value)


@pytest.mark.parametrize(
    ("raw", "knob", "problem"),
    [
        ({"epochs": "3"}, "epochs", "unknown knob"),
        ({"lr": "abc"}, "lr", "expected a number"),
        ({"lr": True}, "lr", "expected a number"),
        ({"lr": "nan"}, "lr", "finite"),
        ({"lr": math.inf}, "lr", "finite"),
        ({"lr": 100.0}, "lr", "above the maximum"),
        ({"lr": 0.0}, "lr", "below the minimum"),
        ({"examples": 1.5}, "examples", "expected an integer"),
        ({"examples": "1.0"}, "examples", "expected an integer"),
        ({"examples": True}, "examples", "expected an integer"),
        ({"examples": 3}, "examples", "not one of"),
        ({"steps": 5}, "steps", "below the minimum"),
        ({"steps": [200]}, "steps", "expected an integer"),
        ({"bug": "typo"}, "bug", "not one of"),
        ({"bug": 1}, "bug", "not one of"),
        ({"bug": None}, "bug", "expected one of"),
    ],
)
def test_bad_values_are_refused_with_the_knob_named(
    raw: dict[str, object], knob: str, problem: str
) -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, raw)
    assert caught.value.knob == knob
    assert knob in str(caught.value)
    assert problem in str(caught.value)
