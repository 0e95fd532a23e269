"""Register, log in, log out."""

import secrets
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.accounts.models import Role, User
from app.accounts.service import AccountError, authenticate, create_user, new_account_problems
from app.security.login_sessions import close_login, open_login
from app.web.deps import OptionalUserDep, SessionDep, ThrottleDep
from app.web.forms import FormDep
from app.web.templating import templates

router = APIRouter(tags=["auth"], include_in_schema=False)


def safe_next(target: str | None) -> str:
    """Only same-site paths: never bounce a fresh login to another host."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    parts = urlsplit(target)
    return "/" if parts.scheme or parts.netloc else target


def start_session(request: Request, session: Session, user: User) -> None:
    # A new session at login: whatever the cookie held before (a planted token, an old CSRF
    # token) is gone.
    request.session.clear()
    request.session["login"] = open_login(session, user=user)
    request.session["csrf"] = secrets.token_urlsafe(32)


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    return templates.TemplateResponse(request, name, context, status_code=status)


@router.get("/register", response_class=HTMLResponse)
def register_page(request: Request, user: OptionalUserDep, next: str = "") -> Response:
    # A visitor who registers from a drill's page comes back to it.
    context = {"form": {}, "errors": {}, "next": safe_next(next) if next else ""}
    return render(request, "pages/register.html", context)


@router.post("/register", response_model=None)
def register(
    request: Request, fields: FormDep, session: SessionDep, throttle: ThrottleDep
) -> Response:
    target = safe_next(fields["next"]) if fields.get("next") else ""
    host = request.client.host if request.client else None
    refusal = throttle.registration_refusal(session, host=host)
    if refusal is not None:  # before any hashing: that is what the limit saves
        context = {"form": fields, "errors": {"form": refusal.message}, "next": target}
        response = render(request, "pages/register.html", context, 429)
        response.headers["Retry-After"] = str(refusal.retry_after_s)
        return response
    errors = new_account_problems(
        session,
        username=fields.get("username", ""),
        display_name=fields.get("display_name", ""),
        password=fields.get("password", ""),
    )
    if fields.get("password", "") != fields.get("password_again", ""):
        errors["password_again"] = "the two passwords differ"
    if errors:
        context = {"form": fields, "errors": errors, "next": target}
        return render(request, "pages/register.html", context, 422)
    # Counted as it comes, before the hash: a burst from one address is counted in full.
    throttle.registered(session, host=host)
    try:
        user = create_user(
            session,
            username=fields.get("username", ""),
            display_name=fields.get("display_name", ""),
            password=fields.get("password", ""),
            role=Role.learner,
        )
    except AccountError as error:  # a simultaneous registration took the name
        context = {"form": fields, "errors": error.errors, "next": target}
        return render(request, "pages/register.html", context, 422)
    start_session(request, session, user)
    return RedirectResponse(target or "/progress", status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, user: OptionalUserDep, next: str = "/") -> Response:
    return render(request, "pages/login.html", {"next": safe_next(next), "error": None})


@router.post("/login", response_model=None)
def login(
    request: Request, fields: FormDep, session: SessionDep, throttle: ThrottleDep
) -> Response:
    # The form already refused a username longer than a username can be (app/web/forms.py).
    username = fields.get("username", "").strip().lower()
    host = request.client.host if request.client else None
    target = safe_next(fields.get("next"))
    context: dict[str, Any] = {"next": target, "username": username}
    refusal = throttle.refusal(session, username=username, host=host)
    if refusal is not None:
        response = render(request, "pages/login.html", context | {"error": refusal.message}, 429)
        response.headers["Retry-After"] = str(refusal.retry_after_s)
        return response
    user = authenticate(session, username=username, password=fields.get("password", ""))
    if user is None:
        throttle.failed(session, username=username, host=host)
        error = "Wrong username or password."
        # Both fields are marked: which of the two was wrong is not said.
        context |= {"error": error, "wrong_credentials": True}
        return render(request, "pages/login.html", context, 401)
    throttle.succeeded(session, username=username, host=host)
    start_session(request, session, user)
    return RedirectResponse(target, status_code=303)


@router.post("/logout")
def logout(request: Request, session: SessionDep) -> RedirectResponse:
    token = request.session.get("login")
    if isinstance(token, str):
        close_login(session, token)
    request.session.clear()
    return RedirectResponse("/", status_code=303)
