"""CSRF protection: one random token per session, required on every state-changing request.

htmx sends it as the X-CSRF-Token header (set once on <body> with hx-headers); plain HTML forms
send it as the csrf_token field. A request without a matching token gets 403 before the handler
runs, so it changes nothing.
"""

import secrets

from fastapi import HTTPException, Request

from app.web.forms import close_form, read_form

HEADER = "X-CSRF-Token"
FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def csrf_token(request: Request) -> str:
    """The session's token, created on first use."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


async def require_csrf(request: Request) -> None:
    if request.method in SAFE_METHODS:
        return
    expected = request.session.get("csrf")
    sent = request.headers.get(HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        field = (await read_form(request)).get(FIELD)
        sent = field if isinstance(field, str) else None
    if not isinstance(expected, str) or sent is None or not secrets.compare_digest(sent, expected):
        # A refused multipart upload was parsed (and maybe spooled to disk) above: release it.
        await close_form(request)
        raise HTTPException(status_code=403, detail="Missing or wrong CSRF token. Reload the page.")
