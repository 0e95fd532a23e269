"""Bring a database to the newest schema with Alembic: the only way tables are made or changed."""

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from app.core.config import ROOT
from app.core.private_files import private_database


def alembic_config(database_url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url)
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    sqlite_file = database_url.removeprefix("sqlite:///")
    if sqlite_file != database_url:
        private_database(Path(sqlite_file))
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)


class SchemaOutOfDate(RuntimeError):
    pass


def check_schema_is_current(engine: Engine, database_url: str) -> None:
    """Refuse to serve a database the migrations have not brought up to date."""
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    if current != head:
        raise SchemaOutOfDate(
            f"the database is at schema revision {current or 'none'}, the code needs {head}: "
            "run `python -m app migrate` (or `make run`, which does) first"
        )
