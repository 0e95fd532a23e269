"""Alembic environment: the URL comes from the caller (app.core.migrate) or from Drillbook's
settings."""

from alembic import context
from sqlalchemy import Connection, text
from sqlmodel import SQLModel

import app.tables  # noqa: F401  (registers every table on SQLModel.metadata)
from app.core.config import Settings
from app.core.db import make_engine

config = context.config
# Carries the models' naming convention (app/models/naming.py), which Alembic also applies to the
# tables and constraints that migrations make (op.create_table, batch mode's rebuilt tables).
target_metadata = SQLModel.metadata


def database_url() -> str:
    return config.get_main_option("sqlalchemy.url") or Settings().database_url


def run_migrations(connection: Connection) -> None:
    if connection.dialect.name == "sqlite":
        # Batch mode rebuilds tables; foreign keys must be off while it copies rows.
        connection.execute(text("PRAGMA foreign_keys=OFF"))
        # End SQLAlchemy's autobegun transaction, or Alembic would join it and never commit.
        connection.commit()
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=database_url(), target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    engine = make_engine(database_url())
    with engine.connect() as connection:
        run_migrations(connection)
    engine.dispose()
