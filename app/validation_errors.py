"""422 answers for requests FastAPI could not validate, safe to encode as JSON.

FastAPI's own handler echoes each bad value back ("input"); a NaN or an infinity sent in a JSON
body (Python's parser accepts them) cannot be written back as strict JSON, and the answer became
a 500. Non-finite numbers are echoed as their names instead.
"""

import math
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf"
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return value


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    detail = _json_safe(jsonable_encoder(error.errors()))
    return JSONResponse({"detail": detail}, status_code=422)
