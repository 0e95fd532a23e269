"""Admins manage accounts: list users, make instructors."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.accounts import service as accounts
from app.accounts.models import Role
from app.web.deps import AdminDep, RowId, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates

router = APIRouter(prefix="/admin", tags=["admin"], include_in_schema=False)


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, session: SessionDep, user: AdminDep) -> HTMLResponse:
    return templates.TemplateResponse(request, "pages/admin_users.html", _context(session, {}))


def _context(session: Session, errors: dict[str, str]) -> dict[str, object]:
    roles = [role.value for role in Role]
    return {"users": accounts.all_users(session), "roles": roles, "errors": errors}


@router.post("/users/{user_id}/role", response_model=None)
def set_role(
    request: Request, user_id: RowId, fields: FormDep, session: SessionDep, user: AdminDep
) -> Response:
    try:
        accounts.set_role(session, admin=user, user_id=user_id, role=fields.get("role", ""))
    except accounts.RoleChangeRefused as refused:
        if refused.status == 404:
            raise HTTPException(status_code=404, detail=refused.message) from None
        # The list again, the refusal beside that user's role.
        context = _context(session, {f"role.{user_id}": refused.message})
        return templates.TemplateResponse(
            request, "pages/admin_users.html", context, status_code=refused.status
        )
    return RedirectResponse("/admin/users", status_code=303)
