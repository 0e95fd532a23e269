"""Telling every web process that an attempt changed: the database is the channel.

Whoever writes an attempt's progress (its worker, or a web process ending it) stores it first and
announces it in the same transaction. On PostgreSQL the announcement is a NOTIFY on one channel,
delivered to every listening web process when the transaction commits; its payload is only
`attempt_id:seq` (seq: the highest metric point id written, 0 for a change of status), far below
PostgreSQL's 8,000-byte cap, because the stream reads what changed from the tables. SQLite has no
NOTIFY: each web process polls the attempts its streams watch (`app.runs.change_feed`).
"""

from dataclasses import dataclass

from sqlalchemy import text
from sqlmodel import Session

CHANNEL = "drillbook_attempts"


@dataclass(frozen=True)
class Change:
    attempt_id: int
    seq: int  # the highest metric point id written with this change; 0 when only status changed

    @property
    def payload(self) -> str:
        return f"{self.attempt_id}:{self.seq}"

    @classmethod
    def parse(cls, payload: str) -> "Change":
        attempt_id, _, seq = payload.partition(":")
        return cls(int(attempt_id), int(seq or 0))


def announce(session: Session, change: Change) -> None:
    """Queue the announcement in the session's transaction: it goes out only if that commits, so
    no listener ever reads before the change is visible."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(
            text("SELECT pg_notify(:channel, :payload)"),
            {"channel": CHANNEL, "payload": change.payload},
        )
