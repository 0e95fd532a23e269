"""Pages one feature owns and another adds to, met through named hooks.

A case attempt's page belongs to cases and a round's to practice, but the instructor's review
and revise-and-resubmit on them belong to grading. So the owner renders its page with whatever
parts other features registered for it (`add_part`), and a feature that handles a form shown on
another's page re-renders that page by its name (`render`), without importing the owner's code.
app/page_hooks.py registers every part and renderer, once, in the web process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlmodel import Session

from app.accounts.models import User

# A part reads the page's subject (a case attempt, a round), its viewer and what the owner has
# put in the context so far (`owner`, say), and returns what it adds.
PagePart = Callable[[Session, Any, User | None, dict[str, Any]], dict[str, Any]]


# A page's owner renders it: (request, session, subject, *, errors=, refusal=, form=,
# status_code=, template=) as cases' and practice's page_response do.
Renderer = Callable[..., HTMLResponse]


_parts: dict[str, dict[str, PagePart]] = {}
_renderers: dict[str, Renderer] = {}


class UnknownPage(LookupError):
    """No renderer is registered under that name (app/page_hooks.py was not installed)."""


def add_part(page: str, name: str, part: PagePart) -> None:
    """Register `part` for `page` under `name` (again under a name replaces it, so installing
    twice leaves each part once). Parts run in registration order."""
    _parts.setdefault(page, {})[name] = part


def parts_context(
    page: str, session: Session, subject: Any, viewer: User | None, context: dict[str, Any]
) -> dict[str, Any]:
    """What every part registered for `page` adds to `context`, merged in order."""
    added: dict[str, Any] = {}
    for part in _parts.get(page, {}).values():
        added |= part(session, subject, viewer, context | added)
    return added


def part_names(page: str) -> list[str]:
    return list(_parts.get(page, {}))


def register_page(page: str, renderer: Renderer) -> None:
    _renderers[page] = renderer


def page_names() -> list[str]:
    return list(_renderers)


def render(page: str, request: Request, session: Session, subject: Any, **how: Any) -> HTMLResponse:
    """The page `page` of `subject`, as its owner renders it (`how`: a form's errors, say)."""
    try:
        renderer = _renderers[page]
    except KeyError:
        raise UnknownPage(page) from None
    return renderer(request, session, subject, **how)
