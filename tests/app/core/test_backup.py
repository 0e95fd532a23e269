import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from app.core.backup import back_up
from app.core.config import ROOT, Settings
from app.core.migrate import upgrade
from app.portfolio.signing import load_or_create_key
from app.security.secret import SESSION_SECRET_FILE, session_secret


def test_backup_copies_the_database_and_the_key(tmp_path: Path) -> None:
    database = tmp_path / "live" / "drillbook.sqlite3"
    url = f"sqlite:///{database}"
    upgrade(url)
    load_or_create_key(tmp_path / "live")
    env = {"DRILLBOOK_DATABASE_URL": url, "DRILLBOOK_DATA_DIR": str(tmp_path / "live")}
    result = subprocess.run(
        [sys.executable, "-m", "app", "backup", str(tmp_path / "copy")],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"} | env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "drillbook.sqlite3" in result.stdout
    with sqlite3.connect(tmp_path / "copy" / "drillbook.sqlite3") as copy:
        assert copy.execute("select username from user").fetchall() == [("local-learner",)]
    key = tmp_path / "copy" / "portfolio-signing-key.pem"
    assert key.read_bytes() == (tmp_path / "live" / "portfolio-signing-key.pem").read_bytes()


def test_the_backup_is_private_and_keeps_a_generated_session_secret(tmp_path: Path) -> None:
    live = tmp_path / "live"
    url = f"sqlite:///{live / 'drillbook.sqlite3'}"
    upgrade(url)
    load_or_create_key(live)
    secret = session_secret(None, environment="dev", fallback_file=live / SESSION_SECRET_FILE)
    old_umask = os.umask(0o022)  # the usual one, under which a plain copy is world-readable
    try:
        written = back_up(Settings(database_url=url, data_dir=live), tmp_path / "copy")
    finally:
        os.umask(old_umask)
    names = sorted(path.name for path in written)
    assert names == sorted(["drillbook.sqlite3", "portfolio-signing-key.pem", SESSION_SECRET_FILE])
    assert stat.S_IMODE((tmp_path / "copy").stat().st_mode) == 0o700
    for path in (tmp_path / "copy").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert (tmp_path / "copy" / SESSION_SECRET_FILE).read_text() == secret


def test_a_configured_session_secret_is_not_backed_up(tmp_path: Path) -> None:
    live = tmp_path / "live"
    url = f"sqlite:///{live / 'drillbook.sqlite3'}"
    upgrade(url)
    (live / SESSION_SECRET_FILE).write_text("left over from development")
    settings = Settings(database_url=url, data_dir=live, secret_key="chosen by the operator")
    written = back_up(settings, tmp_path / "copy")
    assert [path.name for path in written] == ["drillbook.sqlite3"]
