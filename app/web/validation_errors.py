"""Validation errors made safe to encode as JSON (app/web/error_pages.py answers them).

FastAPI's own handler echoes each bad value back ("input"); a NaN or an infinity sent in a JSON
body (Python's parser accepts them) cannot be written back as strict JSON, and the answer became
a 500. Non-finite numbers are echoed as their names instead.
"""

import math
from typing import Any


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf"
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value
