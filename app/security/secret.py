"""The key that signs session cookies."""

import secrets
from pathlib import Path

# The generated key's file in DRILLBOOK_DATA_DIR (dev and test only); `python -m app backup`
# copies it too.
SESSION_SECRET_FILE = "session-secret"


def session_secret(configured: str | None, *, environment: str, fallback_file: Path) -> str:
    """Use the configured key; in dev and test, make one and keep it in a private file instead.

    Production refuses to start without a configured key (see Settings), so a fresh deployment
    never signs cookies with a key nobody chose.
    """
    if configured:
        return configured
    if environment == "prod":
        raise RuntimeError("DRILLBOOK_SECRET_KEY must be set when DRILLBOOK_ENVIRONMENT=prod")
    if fallback_file.exists():
        return fallback_file.read_text().strip()
    fallback_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    fallback_file.touch(mode=0o600)
    fallback_file.write_text(key)
    return key
