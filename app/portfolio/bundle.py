"""Server-made file names and the zip that holds both files of an export.

No name a user typed reaches a path: the username is cut down to [a-z0-9-], and the zip's entry
names are built here, so a hostile name cannot climb out of the folder it is unpacked into.
"""

import io
import re
import zipfile
from datetime import datetime

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, *, fallback: str) -> str:
    cleaned = _NOT_SLUG.sub("-", text.lower()).strip("-")[:40].strip("-")
    return cleaned or fallback


def learner_basename(username: str, learner_id: int, when: datetime) -> str:
    name = slug(username, fallback=f"learner-{learner_id}")
    return f"drillbook-portfolio-{name}-{when:%Y-%m-%d}"


def cohort_basename(cohort_id: int, when: datetime) -> str:
    return f"drillbook-cohort-{cohort_id}-{when:%Y-%m-%d}"


def zip_bundle(basename: str, *, html: bytes, document: bytes, when: datetime) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for suffix, content in ((".html", html), (".json", document)):
            entry = zipfile.ZipInfo(basename + suffix, date_time=when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16  # a plain readable file when unpacked
            archive.writestr(entry, content)
    return buffer.getvalue()
