"""A row locked for the rest of the transaction, on SQLite as on PostgreSQL.

`SELECT ... FOR UPDATE` locks the row on PostgreSQL and means nothing to SQLite, where two
requests could then both read a row, both decide on what they read and both write (two
experiments on the last of a budget, two verdicts). An UPDATE that changes nothing takes the
row's lock on PostgreSQL and the database's write lock on SQLite, each held to the commit: the
second request waits for the first, then reads what it wrote.
"""

from typing import Any, TypeVar

from sqlalchemy import update
from sqlmodel import Session, SQLModel

Row = TypeVar("Row", bound=SQLModel)


def lock_row(session: Session, model: type[Row], row_id: int) -> Row | None:
    """The row, fresh from the database and locked until the transaction ends (None if gone)."""
    key: Any = model.id  # type: ignore[attr-defined]
    session.execute(update(model).where(key == row_id).values(id=key))
    return session.get(model, row_id, populate_existing=True)
