"""The one byte form of a JSON value that digests and signatures are computed over.

The drills' own canonical JSON (sorted keys, compact separators, non-finite floats as strings):
any reader can rebuild exactly these bytes from the parsed export, whatever its JSON library.
"""

import hashlib
from typing import Any

from drills.core.digest import canonical_json


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
