"""A consistent copy of everything the server keeps: the database and the signing key."""

import shutil
import sqlite3
from pathlib import Path

from app.config import Settings
from app.portfolio.signing import key_path


def back_up(settings: Settings, destination: Path) -> list[Path]:
    """Copy the SQLite database (with SQLite's online backup, safe while the app runs) and the
    portfolio signing key into `destination`. Returns the files written."""
    source = settings.sqlite_path
    if source is None:
        raise ValueError("only SQLite databases are backed up here; use your database's own tools")
    if not source.exists():
        raise FileNotFoundError(f"no database at {source}")
    destination.mkdir(parents=True, exist_ok=True)
    copy = destination / source.name
    with sqlite3.connect(source) as live, sqlite3.connect(copy) as target:
        live.backup(target)
    written = [copy]
    key = key_path(settings.data_dir)
    if key.exists():
        written.append(Path(shutil.copy2(key, destination / key.name)))
    return written
