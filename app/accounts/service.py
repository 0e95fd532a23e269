"""Creating accounts and checking credentials (the routes and the CLI share these)."""

import re

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.models import Role, User
from app.core.limits import MAX_DISPLAY_NAME
from app.security.login_sessions import close_every_login
from app.security.passwords import hash_password, password_problem, verify_password
from app.web.field_errors import ErrorCollector, FieldErrors

USERNAME = re.compile(r"[a-z0-9][a-z0-9_.-]{2,31}")


class AccountError(FieldErrors):
    """Fields of a new account (or a new password) are wrong; `errors` names each."""


def find_user(session: Session, username: str) -> User | None:
    return session.exec(select(User).where(User.username == username.strip().lower())).first()


def new_account_problems(
    session: Session, *, username: str, display_name: str, password: str
) -> dict[str, str]:
    """Every field of a new account that cannot be used, with what is wrong (empty: none)."""
    problems = ErrorCollector()
    username = username.strip().lower()
    if not USERNAME.fullmatch(username):
        problems.add("username", "use 3-32 lower-case letters, digits, dots, dashes or underscores")
    elif find_user(session, username) is not None:
        problems.add("username", f"the username {username!r} is taken")
    if len(display_name.strip()) > MAX_DISPLAY_NAME:
        problems.add("display_name", f"use at most {MAX_DISPLAY_NAME} characters")
    if problem := password_problem(password):
        problems.add("password", problem)
    return problems.errors


def create_user(
    session: Session, *, username: str, display_name: str, password: str, role: Role
) -> User:
    problems = new_account_problems(
        session, username=username, display_name=display_name, password=password
    )
    if problems:
        raise AccountError.of(problems)
    username = username.strip().lower()
    display_name = display_name.strip() or username
    user = User(
        username=username,
        display_name=display_name,
        role=role,
        password_hash=hash_password(password),
    )
    session.add(user)
    try:
        session.commit()
    except IntegrityError:  # the unique username: a simultaneous registration took it first
        session.rollback()
        raise AccountError("username", f"the username {username!r} is taken") from None
    session.refresh(user)
    return user


def set_password(session: Session, *, user: User, password: str) -> None:
    if problem := password_problem(password):
        raise AccountError("password", problem)
    user.password_hash = hash_password(password)
    session.add(user)
    session.commit()
    close_every_login(session, user=user)  # a new password logs every browser out


def authenticate(session: Session, *, username: str, password: str) -> User | None:
    user = find_user(session, username)
    if not verify_password(password, user.password_hash if user else None):
        return None
    return user


class RoleChangeRefused(ValueError):
    """`status` is the HTTP answer: 404 for no such user, 422 for a role that cannot be set."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def all_users(session: Session) -> list[User]:
    return list(session.exec(select(User).order_by(col(User.id))).all())


def set_role(session: Session, *, admin: User, user_id: int, role: str) -> User:
    """An admin gives another account a role; an admin cannot demote themselves."""
    target = session.get(User, user_id)
    if target is None:
        raise RoleChangeRefused(404, f"No user {user_id}.")
    if role not in {r.value for r in Role}:
        raise RoleChangeRefused(422, f"unknown role {role!r}")
    if target.id == admin.id and role != Role.admin:
        raise RoleChangeRefused(422, "an admin cannot demote themselves")
    target.role = role
    session.add(target)
    session.commit()
    return target
