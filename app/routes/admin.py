"""Admins manage accounts: list users, make instructors."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlmodel import col, select

from app.deps import AdminDep, RowId, SessionDep
from app.forms import FormDep
from app.models import Role, User
from app.templating import templates

router = APIRouter(prefix="/admin", tags=["admin"], include_in_schema=False)


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, session: SessionDep, user: AdminDep) -> HTMLResponse:
    users = session.exec(select(User).order_by(col(User.id))).all()
    context = {"users": users, "roles": [role.value for role in Role]}
    return templates.TemplateResponse(request, "pages/admin_users.html", context)


@router.post("/users/{user_id}/role")
def set_role(
    user_id: RowId, fields: FormDep, session: SessionDep, user: AdminDep
) -> RedirectResponse:
    target = session.get(User, user_id)
    if target is None:
        raise HTTPException(status_code=404, detail=f"No user {user_id}.")
    role = fields.get("role", "")
    if role not in {r.value for r in Role}:
        raise HTTPException(status_code=422, detail=f"unknown role {role!r}")
    if target.id == user.id and role != Role.admin:
        raise HTTPException(status_code=422, detail="an admin cannot demote themselves")
    target.role = role
    session.add(target)
    session.commit()
    return RedirectResponse("/admin/users", status_code=303)
