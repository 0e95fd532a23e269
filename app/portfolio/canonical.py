"""The byte forms of a JSON value that an export's digests and signature are computed over.

An export names its form in the top-level "canonicalization" field, which the signature covers:

- "jcs", every export made now: RFC 8785, the JSON Canonicalization Scheme (the `rfc8785`
  package). Any language's JCS library rebuilds these bytes from the parsed file: numbers as
  ECMAScript prints them (1.0 as `1`, 1e-07 as `1e-7`), strings as raw UTF-8, keys sorted by
  their UTF-16 code units.
- absent, exports made before that: the drills' own canonical JSON (drills/core/digest.py),
  which is Python's json text (`1.0`, `1e-07`, `\\u00e9`) and which only Python rebuilds
  reliably. Kept so that exports learners already hold still verify; nothing new is signed so.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import rfc8785

from drills.core.digest import canonical_json, json_safe

FIELD = "canonicalization"
# The integers a double holds exactly. JCS reads every number as a double (as JavaScript does),
# so rfc8785 refuses larger ones rather than write digits a reader would round.
MAX_EXACT_INT = 2**53 - 1


@dataclass(frozen=True)
class Canonicalization:
    """One way to turn a parsed JSON value into the bytes that are hashed and signed."""

    name: str | None  # as the export's FIELD declares it; None: the field is absent
    to_bytes: Callable[[Any], bytes]
    description: str  # for a person reading the verifier's answer

    def sha256_hex(self, value: Any) -> str:
        return hashlib.sha256(self.to_bytes(value)).hexdigest()


# No jcs_safe here: a verifier canonicalises what the file holds, and a value JCS cannot write
# (NaN, a 64-bit integer) is one no export writes, so rfc8785's error is the right answer.
JCS = Canonicalization(
    "jcs", rfc8785.dumps, "digests and signature over RFC 8785 (JCS) canonical JSON"
)
LEGACY = Canonicalization(
    None,
    lambda value: canonical_json(value).encode("utf-8"),
    "digests and signature over Python's canonical JSON text: an export made before Drillbook "
    "signed over RFC 8785",
)
# The names an export may declare; an absent field means LEGACY, any other name is refused.
DECLARED = {JCS.name: JCS}


def jcs_safe(value: Any) -> Any:
    """A copy of `value` that rfc8785 can write, as close to it as JSON allows.

    Non-finite floats become "nan", "inf" and "-inf", as in the drills' run records; integers
    beyond ±(2**53 − 1) (a drawn 63-bit seed) become their decimal digits as a string, as
    RFC 8785 advises for numbers a double cannot hold; tuples become lists.
    """
    if isinstance(value, dict):
        return {str(key): jcs_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jcs_safe(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_EXACT_INT:
        return str(value)
    return json_safe(value)
