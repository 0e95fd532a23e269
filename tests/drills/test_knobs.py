import math

import pytest

from drills.core.contract import Knob
from drills.core.knobs import KnobError, resolve_knob, resolve_knobs
from drills.core.registry import get_drill

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
        ({"lr": -0.01}, "lr", "below the minimum"),
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


# The "float-list" kind, e.g. the learning rates of a sweep.
RATES = Knob("lrs", "float-list", (1e-6, 1.0), "rates", minimum=1e-7, maximum=10.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1e-6,1e-4,1e-2,1", (1e-6, 1e-4, 1e-2, 1.0)),
        (" 1e-6 , 0.5 ", (1e-6, 0.5)),
        ("0.01", (0.01,)),
        ([1e-6, 0.0001], (1e-6, 1e-4)),
        ((1, "0.5"), (1.0, 0.5)),
        (0.3, (0.3,)),
        ("1,1e-3", (1.0, 1e-3)),  # the order given is kept
    ],
)
def test_float_lists_parse_from_text_and_json(value: object, expected: tuple[float, ...]) -> None:
    resolved = resolve_knob(RATES, value)
    assert resolved == expected
    assert isinstance(resolved, tuple) and all(type(item) is float for item in resolved)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "at least one number"),
        ("  ", "at least one number"),
        ([], "at least one number"),
        ("1e-3,", "number 2 of '1e-3,' is empty"),
        ("1e-3,,1", "is empty"),
        ("0.01,1e-2", "0.01 is listed twice"),
        ([0.5, 0.5], "listed twice"),
        ("1e-3,nan", "finite"),
        ([1e-3, math.inf], "finite"),
        ("1e-3,abc", "expected a number, got 'abc'"),
        ([1e-3, True], "expected a number"),
        ([[1e-3]], "expected a number"),
        ("1e-8", "below the minimum"),
        ("1,20", "above the maximum"),
        (",".join(str(i) for i in range(1, 8)), "at most 6 numbers"),
        (None, "expected comma-separated numbers"),
        (True, "expected comma-separated numbers"),
    ],
)
def test_bad_float_lists_are_refused_with_the_knob_named(value: object, problem: str) -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knob(RATES, value)
    assert caught.value.knob == "lrs"
    assert str(caught.value).startswith("knob 'lrs': ")
    assert problem in str(caught.value)


def test_a_sweep_drill_fills_in_its_default_list() -> None:
    sweep = get_drill("lr-sweep")
    assert resolve_knobs(sweep, {}) == {
        "optimizer": "sgd",
        "zero_grad": "before-backward",
        "optimizer_holds": "the-model",
        "lrs": (1e-6, 1e-4, 1e-2, 1.0),
    }
    assert resolve_knobs(sweep, {"lrs": "1e-3"})["lrs"] == (1e-3,)
    # A resolved value resolves to itself: the worker re-validates what the web app resolved.
    resolved = resolve_knobs(sweep, {"lrs": [0.1, 0.2]})
    assert resolve_knobs(sweep, resolved) == resolved
