"""Column types shared by the tables, so each backend stores a kind of value the same way.

Datetimes need nothing here: SQLModel gives every `datetime` field its `UTCDateTime` type
(`timestamp with time zone` on PostgreSQL), which refuses a naive datetime on write and reads back
an aware UTC one on every backend, SQLite included (it stores UTC without an offset).
"""

from sqlalchemy import JSON
from sqlalchemy.dialects.postgresql import JSONB

# What a drill reported, kept as a JSON document: JSONB on PostgreSQL (parsed once on write,
# compared by value, indexable), JSON text on SQLite. JSONB keeps no key order: read a document
# by key, or sort it, never by the order it was written in.
JSONDocument = JSON().with_variant(JSONB(), "postgresql")
