"""Spaced review: the "Due today" list, one item (answer from memory, then the model answer),
and the rating that reschedules it."""

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.models import MAX_ROW_ID
from app.core.whole_numbers import whole_number
from app.practice import items as review_items
from app.practice import return_line as review_return
from app.practice import service as practice
from app.practice.models import ReviewRating
from app.practice.streak import shown_streak
from app.web.deps import CurrentUser, NowDep, SessionDep
from app.web.error_pages import error_page
from app.web.forms import FormDep, is_htmx
from app.web.templating import templates

router = APIRouter(tags=["practice"], include_in_schema=False)


def _coming_back(
    session: SessionDep, user: CurrentUser, rated: str, now: NowDep
) -> review_return.ComingBack | None:
    return review_return.coming_back(session, learner_id=user.saved_id, key=rated, now=now)


@router.get("/practice", response_class=HTMLResponse)
def due_today(
    request: Request, session: SessionDep, user: CurrentUser, now: NowDep, rated: str = ""
) -> Response:
    """`rated`: the item rated just before (see rate()), to say when it is back."""
    context = {
        "due": practice.due_today(session, learner_id=user.saved_id, now=now),
        "now": now,
        "coming_back": _coming_back(session, user, rated, now),
        "streak": shown_streak(session, learner_id=user.saved_id, now=now),
    }
    return templates.TemplateResponse(request, "pages/practice.html", context)


def _item(session: SessionDep, user: CurrentUser, key: str) -> review_items.PracticeItem:
    try:
        return review_items.practice_item(session, learner_id=user.saved_id, key=key)
    except review_items.UnknownPracticeItem as error:
        raise HTTPException(status_code=404, detail=str(error)) from None


def _reviews_of(session: SessionDep, user: CurrentUser, key: str) -> int:
    card = review_items.card_of(session, learner_id=user.saved_id, key=key)
    return card.reviews if card is not None else 0


def _seen(fields: dict[str, str]) -> int:
    """How many reviews the page showed the item with (a form field: anything but a count is
    taken as 0, and a rating sent with a wrong count is refused as already rated)."""
    return whole_number(fields.get("seen_reviews", ""), maximum=MAX_ROW_ID) or 0


def _page(
    request: Request, context: dict[str, Any], *, partial: bool, status_code: int = 200
) -> HTMLResponse:
    name = "partials/practice_step.html" if partial else "pages/practice_item.html"
    return templates.TemplateResponse(request, name, context, status_code=status_code)


@router.get("/practice/{key}", response_class=HTMLResponse)
def item_page(
    key: str,
    request: Request,
    session: SessionDep,
    user: CurrentUser,
    now: NowDep,
    rated: str = "",
) -> Response:
    context = {
        "item": _item(session, user, key),
        "seen_reviews": _reviews_of(session, user, key),
        "answer": "",
        "revealed": False,
        "errors": {},
        "coming_back": _coming_back(session, user, rated, now),
    }
    return _page(request, context, partial=False)


@router.post("/practice/{key}/answer", response_model=None)
def reveal(
    key: str, request: Request, fields: FormDep, session: SessionDep, user: CurrentUser
) -> Response:
    """The learner's answer is in: show the model answer beside it, and the ratings. Nothing is
    stored yet; the answer is stored with the rating."""
    item = _item(session, user, key)
    answer = fields.get("answer", "")
    errors = practice.answer_errors(answer)
    context = {
        "item": item,
        "seen_reviews": _seen(fields),
        "answer": answer,
        "revealed": not errors,
        "errors": errors,
    }
    return _page(request, context, partial=is_htmx(request), status_code=422 if errors else 200)


@router.post("/practice/{key}/rating", response_model=None)
def rate(
    key: str,
    request: Request,
    fields: FormDep,
    session: SessionDep,
    user: CurrentUser,
    now: NowDep,
) -> Response:
    item = _item(session, user, key)
    answer = fields.get("answer", "")
    seen = _seen(fields)
    try:
        practice.rate(
            session,
            learner_id=user.saved_id,
            key=key,
            answer=answer,
            rating=fields.get("rating", ""),
            seen_reviews=seen,
            now=now,
        )
    except practice.InvalidRating as error:
        context = {
            "item": item,
            "seen_reviews": seen,
            "answer": answer,
            "revealed": "answer" not in error.errors,
            "errors": error.errors,
        }
        return _page(request, context, partial=is_htmx(request), status_code=422)
    except practice.AlreadyRated:
        # Rendered here, while the session is open: its rollback reloads what the page shows.
        session.rollback()
        message = "You rated this item already (another tab, or a double click)."
        return error_page(request, 409, message)
    following = practice.due_today(session, learner_id=user.saved_id, now=now).ready
    # On to the next item due, until none is left. The page there says when this one is back:
    # the link names the item only, the due date is read from its card.
    rated = urlencode({"rated": key})
    target = f"/practice/{following[0].key}?{rated}" if following else f"/practice?done=1&{rated}"
    return RedirectResponse(target, status_code=303)


RATINGS = [
    (ReviewRating.again, "Again", "I did not recall it"),
    (ReviewRating.hard, "Hard", "recalled, with real effort"),
    (ReviewRating.good, "Good", "recalled it"),
    (ReviewRating.easy, "Easy", "recalled it at once"),
]
templates.env.globals["REVIEW_RATINGS"] = RATINGS
