"""An instructor's saved review comments: the list, and adding, editing and deleting one.

Each list is its owner's alone: another instructor's comment (an admin's too) is answered as
a comment that does not exist.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.grading import saved_comments
from app.grading.models import SavedComment
from app.web.deps import InstructorDep, NowDep, RowId, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates

router = APIRouter(tags=["reviews"], include_in_schema=False)

LIST = "/reviews/comments"


def own_saved_comment(comment_id: RowId, session: SessionDep, user: InstructorDep) -> SavedComment:
    comment = saved_comments.owned_comment(session, owner_id=user.saved_id, comment_id=comment_id)
    if comment is None:
        raise HTTPException(status_code=404, detail=f"No saved comment {comment_id}.")
    return comment


SavedCommentDep = Annotated[SavedComment, Depends(own_saved_comment)]


def _page(
    request: Request,
    session: Session,
    owner_id: int,
    *,
    extra: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context: dict[str, Any] = {
        "comments": saved_comments.saved_comments_of(session, owner_id=owner_id),
        "new_text": "",
        "errors": {},
        "editing": None,
    } | (extra or {})
    return templates.TemplateResponse(
        request, "pages/saved_comments.html", context, status_code=status_code
    )


def _status(error: saved_comments.InvalidSavedComment) -> int:
    return 409 if isinstance(error, saved_comments.SavedCommentConflict) else 422


@router.get(LIST, response_class=HTMLResponse)
def saved_comments_page(request: Request, session: SessionDep, user: InstructorDep) -> HTMLResponse:
    return _page(request, session, user.saved_id)


@router.post(LIST, response_model=None)
def add_saved_comment(
    request: Request, fields: FormDep, session: SessionDep, user: InstructorDep, now: NowDep
) -> Response:
    text = fields.get("text", "")
    try:
        saved_comments.add_comment(session, owner_id=user.saved_id, text=text, now=now)
    except saved_comments.InvalidSavedComment as error:
        extra = {"new_text": text, "errors": error.errors}
        return _page(request, session, user.saved_id, extra=extra, status_code=_status(error))
    return RedirectResponse(f"{LIST}#saved-comments", status_code=303)


@router.post(LIST + "/{comment_id}", response_model=None)
def change_saved_comment(
    request: Request,
    comment: SavedCommentDep,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
    now: NowDep,
) -> Response:
    """Save the edited text, or delete the comment when its Delete button was pressed."""
    if fields.get("delete"):
        saved_comments.delete_comment(session, comment=comment)
        return RedirectResponse(f"{LIST}#saved-comments", status_code=303)
    text = fields.get("text", "")
    try:
        saved_comments.edit_comment(session, comment=comment, text=text, now=now)
    except saved_comments.InvalidSavedComment as error:
        # The box keeps what was typed, beside its error; nothing of it was stored.
        extra = {"errors": error.errors, "editing": {"id": comment.id, "text": text}}
        return _page(request, session, user.saved_id, extra=extra, status_code=_status(error))
    return RedirectResponse(f"{LIST}#saved-comment-{comment.id}", status_code=303)
