"""Canonical JSON for run records: stable bytes to hash, and no NaN/inf that strict JSON refuses."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any


def json_safe(value: Any) -> Any:
    """A copy of `value` that `json.dumps(..., allow_nan=False)` accepts.

    Non-finite floats become the strings "nan", "inf" and "-inf"; tuples become lists. A
    subclass of str (torch's version string is one) becomes a plain str: a record is pickled
    to the web process (a replay's result, a record its worker could not store), and
    unpickling such a value would import its class's package there. Importing torch holds every
    thread of that process, the event loop's too, for a second or more.
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    # json writes floats with repr(), which round-trips exactly; sorted keys and compact
    # separators make equal data give equal bytes.
    return json.dumps(json_safe(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


def metrics_digest(metrics: Any) -> str:
    return hashlib.sha256(canonical_json(metrics).encode("utf-8")).hexdigest()
