"""Bring a database to the newest schema with Alembic (the app never calls create_all)."""

from pathlib import Path

from alembic import command
from alembic.config import Config

from app.config import ROOT


def alembic_config(database_url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url)
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    sqlite_file = database_url.removeprefix("sqlite:///")
    if sqlite_file != database_url:
        Path(sqlite_file).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)
