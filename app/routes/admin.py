"""Admins manage accounts: list users, make instructors."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from app import accounts
from app.deps import AdminDep, RowId, SessionDep
from app.forms import FormDep
from app.models import Role
from app.templating import templates

router = APIRouter(prefix="/admin", tags=["admin"], include_in_schema=False)


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, session: SessionDep, user: AdminDep) -> HTMLResponse:
    context = {"users": accounts.all_users(session), "roles": [role.value for role in Role]}
    return templates.TemplateResponse(request, "pages/admin_users.html", context)


@router.post("/users/{user_id}/role")
def set_role(
    user_id: RowId, fields: FormDep, session: SessionDep, user: AdminDep
) -> RedirectResponse:
    try:
        accounts.set_role(session, admin=user, user_id=user_id, role=fields.get("role", ""))
    except accounts.RoleChangeRefused as refused:
        raise HTTPException(status_code=refused.status, detail=refused.message) from None
    return RedirectResponse("/admin/users", status_code=303)
