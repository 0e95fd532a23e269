"""Server-side login sessions: the signed cookie carries a random token, the database keeps only
its hash. Logging out (or a password change) deletes the row, so a copied cookie dies with it."""

import hashlib
import secrets

from sqlalchemy import bindparam
from sqlmodel import Session, col, delete, select

from app.accounts.models import LoginSession, User


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_login(session: Session, *, user: User) -> str:
    token = secrets.token_urlsafe(32)
    session.add(LoginSession(token_hash=_hash(token), user_id=user.saved_id))
    session.commit()
    return token


# One query, built once: every request of a logged-in browser asks it, and building the
# statement anew each time cost more than SQLAlchemy's lookup of its compiled form.
_USER_OF_TOKEN_HASH = (
    select(User)
    .join(LoginSession, col(LoginSession.user_id) == col(User.id))
    .where(col(LoginSession.token_hash) == bindparam("token_hash"))
)


def user_of(session: Session, token: str) -> User | None:
    return session.exec(_USER_OF_TOKEN_HASH, params={"token_hash": _hash(token)}).first()


def close_login(session: Session, token: str) -> None:
    session.exec(delete(LoginSession).where(col(LoginSession.token_hash) == _hash(token)))
    session.commit()


def close_every_login(session: Session, *, user: User) -> None:
    session.exec(delete(LoginSession).where(col(LoginSession.user_id) == user.saved_id))
    session.commit()
