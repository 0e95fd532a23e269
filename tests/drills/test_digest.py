import json
import math

from drills.core.digest import canonical_json, json_safe, metrics_digest


def test_nonfinite_floats_become_strings() -> None:
    value = {"loss": [[0, math.nan], [1, math.inf], [2, -math.inf]], "t": (1.5,)}
    assert json_safe(value) == {"loss": [[0, "nan"], [1, "inf"], [2, "-inf"]], "t": [1.5]}
    json.dumps(json_safe(value), allow_nan=False)


def test_canonical_json_is_sorted_compact_and_exact() -> None:
    assert (
        canonical_json({"b": [1, 0.1 + 0.2], "a": None}) == '{"a":null,"b":[1,0.30000000000000004]}'
    )


def test_digest_ignores_key_order_but_not_values() -> None:
    assert metrics_digest({"a": [[0, 1.0]], "b": []}) == metrics_digest({"b": [], "a": [[0, 1.0]]})
    assert metrics_digest({"a": [[0, 1.0]]}) != metrics_digest({"a": [[0, 1.0000000000000002]]})
    assert len(metrics_digest({"a": [[0, math.nan]]})) == 64
