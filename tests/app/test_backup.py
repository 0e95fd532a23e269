import sqlite3
import subprocess
import sys
from pathlib import Path

from app.config import ROOT
from app.migrate import upgrade
from app.portfolio.signing import load_or_create_key


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
