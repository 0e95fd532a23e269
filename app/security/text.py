"""Text the database can store, checked once for every request before any handler runs.

Two kinds of character get through HTTP decoding but not into storage: a lone surrogate (JSON
allows the escape "\\ud800"; it cannot be encoded as UTF-8, so SQLite's driver and every JSON
response fail on it) and NUL (PostgreSQL refuses it in text). Query parameters, path parameters,
form fields and every string (and key) of a JSON body are checked; the first bad one is answered
with 422, naming where it is, in the shape FastAPI uses for its own validation errors.
"""

from collections.abc import Iterator
from typing import Any

from fastapi import HTTPException, Request

from app.security.csrf import SAFE_METHODS
from app.web.forms import close_form, read_form

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
Location = list[str | int]


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate, which is not a Unicode character"
    return None


def json_strings(value: Any, where: Location) -> Iterator[tuple[Location, str]]:
    """Every string of a parsed JSON value with its location. Iterative, so that a deeply nested
    body cannot exhaust the stack. A key is reported at its parent's location plus its ascii()
    form (the key itself might be the unprintable text)."""
    stack: list[tuple[Location, Any]] = [(where, value)]
    while stack:
        location, item = stack.pop()
        if isinstance(item, str):
            yield location, item
        elif isinstance(item, dict):
            for key, inner in item.items():
                if text_problem(key):
                    yield [*location, ascii(key)], key
                else:
                    stack.append(([*location, key], inner))
        elif isinstance(item, list):
            stack.extend(([*location, index], inner) for index, inner in enumerate(item))


async def _request_strings(request: Request) -> list[tuple[Location, str]]:
    found: list[tuple[Location, str]] = []
    found += ((["path", name], value) for name, value in request.path_params.items())
    for name, value in request.query_params.multi_items():
        found += [(["query", ascii(name)], name), (["query", name], value)]
    if request.method not in SAFE_METHODS:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(FORM_TYPES):
            for name, field in (await read_form(request)).multi_items():
                found.append((["form", ascii(name)], name))
                if isinstance(field, str):
                    found.append((["form", name], field))
        elif content_type.startswith("application/json"):
            try:
                body = await request.json()  # cached: FastAPI has parsed it already
            except (ValueError, RecursionError):
                body = None  # unreadable JSON is answered by FastAPI (422 or 400)
            found += json_strings(body, ["body"])
    return found


async def require_storable_text(request: Request) -> None:
    for location, text in await _request_strings(request):
        if problem := text_problem(text):
            # A refused multipart upload may have been spooled to disk above: release it.
            await close_form(request)
            field = ".".join(str(part) for part in location[1:]) or location[0]
            error = {"loc": location, "msg": f"{field} {problem}", "type": "value_error"}
            raise HTTPException(status_code=422, detail=[error])
