"""A consistent, private copy of everything the server keeps: the database, the portfolio signing
key and, when it was generated rather than configured, the session secret."""

import shutil
import sqlite3
from pathlib import Path

from app.core.config import Settings
from app.core.private_files import portfolio_key_path, private_file
from app.security.secret import SESSION_SECRET_FILE


def back_up(settings: Settings, destination: Path) -> list[Path]:
    """Copy the SQLite database (with SQLite's online backup, safe while the app runs), the
    portfolio signing key and a generated session secret into `destination` (made 0700; every
    file 0600: the database holds password hashes and every learner's work). Returns the files
    written."""
    source = settings.sqlite_path
    if source is None:
        raise ValueError("only SQLite databases are backed up here; use your database's own tools")
    if not source.exists():
        raise FileNotFoundError(f"no database at {source}")
    destination.mkdir(parents=True, exist_ok=True)
    destination.chmod(0o700)
    copy = destination / source.name
    private_file(copy)
    with sqlite3.connect(source) as live, sqlite3.connect(copy) as target:
        live.backup(target)
    written = [copy]
    # Without the key, older exports can no longer be tied to this server; without the session
    # secret (dev/test only: production configures DRILLBOOK_SECRET_KEY), every login ends.
    kept_files = [portfolio_key_path(settings.data_dir)]
    if not settings.secret_key:  # the generated file is the secret in use
        kept_files.append(settings.data_dir / SESSION_SECRET_FILE)
    for kept in kept_files:
        if kept.exists():
            target_file = destination / kept.name
            private_file(target_file)
            shutil.copyfile(kept, target_file)
            written.append(target_file)
    return written
