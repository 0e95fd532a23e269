"""Errors answered in the form the client asked in: JSON under /api/, a page in the site's
layout (with a way back) everywhere else. A person who follows a stale link, sends a form past
its caps or is refused an action gets a page, never `{"detail": ...}`."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.web.templating import templates
from app.web.validation_errors import json_safe

log = logging.getLogger(__name__)

TITLES = {
    400: "The request could not be read",
    401: "Log in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not a way this page can be used",
    409: "That has already happened",
    413: "Too much text",
    422: "Some of what was sent is not right",
    429: "Too many at once",
    500: "Something went wrong on our side",
}


# Said instead of Starlette's stock phrase ("Not Found"), which only repeats the title.
PLAIN_WORDS = {
    404: "There is no page at this address: the link may be old, or the record gone.",
    405: "This address does not take that kind of request (a link where a form was expected).",
}


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def error_page(
    request: Request,
    status: int,
    message: str,
    *,
    problems: list[str] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    context: dict[str, Any] = {
        "status": status,
        "title": TITLES.get(status, "Something is wrong"),
        "message": message,
        "problems": problems or [],
    }
    return templates.TemplateResponse(
        request, "pages/error.html", context, status_code=status, headers=headers
    )


async def http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)
    headers = dict(error.headers or {})
    if wants_json(request):
        return JSONResponse(
            {"detail": error.detail}, status_code=error.status_code, headers=headers
        )
    if isinstance(error.detail, list):  # validation errors raised by hand: [{loc, msg}, ...]
        return error_page(
            request,
            error.status_code,
            TITLES.get(error.status_code, ""),
            problems=problems_of(error.detail),
            headers=headers,
        )
    message = error.detail if isinstance(error.detail, str) else TITLES.get(error.status_code, "")
    if message == HTTPStatus(error.status_code).phrase:
        message = PLAIN_WORDS.get(error.status_code, "")
    return error_page(request, error.status_code, message, headers=headers)


def problems_of(detail: list[Any]) -> list[str]:
    """Validation errors in words: "display_name: contains a NUL character"."""
    problems = []
    for item in detail:
        if not isinstance(item, dict):
            problems.append(str(item))
            continue
        where = ".".join(str(part) for part in item.get("loc", [])[1:]) or "request"
        problems.append(f"{where}: {item.get('msg')}")
    return problems


async def validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    detail = json_safe(jsonable_encoder(error.errors()))
    if wants_json(request):
        return JSONResponse({"detail": detail}, status_code=422)
    problems = [
        f"{'.'.join(str(part) for part in item.get('loc', [])[1:]) or 'request'}: {item.get('msg')}"
        for item in detail
    ]
    return error_page(
        request, 422, "The request had values this page cannot take.", problems=problems
    )


async def server_error(request: Request, error: Exception) -> Response:
    """The last resort (the traceback goes to the log, never to the client)."""
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    if wants_json(request):
        return JSONResponse({"detail": "Internal Server Error"}, status_code=500)
    return error_page(
        request, 500, "The server failed to answer this request. It has been logged; try again."
    )
