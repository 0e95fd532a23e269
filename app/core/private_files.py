"""What the server keeps on disk is for its own user alone: the data directory 0700, the SQLite
database and SQLite's -wal and -shm files 0600. They hold password hashes, session-token hashes
and every learner's work; under the usual umask they were 0644 in a 0755 var/.

SQLite gives the -wal and -shm files it creates the mode of the database file, so the database
file is made (or narrowed to) 0600 before the first connection; sidecars left by an earlier,
wider start are narrowed too. Backups are already private (app/core/backup.py).
"""

from pathlib import Path

SIDECARS = ("-wal", "-shm", "-journal")
# The portfolio's signing key, kept in the data directory: named here, in the base, because the
# backup copies it as well as the portfolio signing with it (app/portfolio/signing.py).
PORTFOLIO_KEY_FILE = "portfolio-signing-key.pem"


def portfolio_key_path(data_dir: Path) -> Path:
    return data_dir / PORTFOLIO_KEY_FILE


def private_file(path: Path) -> None:
    """Create `path` empty with mode 0600 (whatever the umask), so no byte is ever readable by
    others; an existing file is narrowed to 0600 too."""
    path.touch(mode=0o600)
    path.chmod(0o600)


def private_directory(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)


def private_database(sqlite_file: Path) -> None:
    """Create the database file empty at 0600 if it is missing (SQLite takes an empty file as an
    empty database), else narrow it and its sidecars to 0600. Its folder, when made here, is
    0700; an existing folder is the operator's to set."""
    if sqlite_file.name == ":memory:":
        return
    if not sqlite_file.parent.exists():
        sqlite_file.parent.mkdir(parents=True, mode=0o700)
    private_file(sqlite_file)
    for suffix in SIDECARS:
        sidecar = sqlite_file.with_name(sqlite_file.name + suffix)
        if sidecar.exists():
            sidecar.chmod(0o600)
