"""The shapes every xAPI-style statement of an export shares: its digest, timestamps, the actor,
the verb and a drill as the activity."""

from datetime import UTC, datetime
from typing import Any

from app.accounts.models import User
from app.models.time import as_utc
from app.portfolio.canonical import JCS, jcs_safe
from drills.core.registry import UnknownDrill, get_drill


def digested(statement: dict[str, Any]) -> dict[str, Any]:
    """The statement as the export holds it, with `digest`: the sha256 of its RFC 8785 bytes."""
    plain: dict[str, Any] = jcs_safe(statement)
    return plain | {"digest": JCS.sha256_hex(plain)}


def timestamp(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return as_utc(moment).astimezone(UTC).isoformat().replace("+00:00", "Z")


def agent(user: User | None) -> dict[str, Any]:
    if user is None:
        return {"objectType": "Agent", "name": "(deleted account)"}
    return {
        "objectType": "Agent",
        "name": user.display_name,
        "account": {"homePage": "urn:drillbook", "name": user.username},
    }


def verb(name: str) -> dict[str, Any]:
    return {"id": f"urn:drillbook:verb:{name}", "display": {"en": name}}


def drill_activity(slug: str, version: str | None = None) -> dict[str, Any]:
    try:
        drill = get_drill(slug)
        title, summary = drill.title, drill.summary
    except UnknownDrill:  # a drill retired since the record was made
        title, summary = slug, ""
    definition: dict[str, Any] = {"name": {"en": title}, "description": {"en": summary}}
    if version is not None:
        definition["version"] = version
    return {"objectType": "Activity", "id": f"urn:drillbook:drill:{slug}", "definition": definition}
