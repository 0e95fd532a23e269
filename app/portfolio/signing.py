"""The server's Ed25519 key, and signing and checking a whole export with it.

The private key is generated on first start into the data directory (mode 0600), never into the
database: a database dump or backup alone cannot forge an export. The public key travels inside
every export, so anyone can check one offline; on the server, `verify` also says whether that
embedded key is this server's own.

What is signed, and over which bytes, is the export's declared canonical form
(app/portfolio/canonical.py): RFC 8785 for every export made now, the drills' canonical JSON for
exports made before the field existed. The verifier takes the form the document declares (the
signature covers that declaration), never whichever of the two happens to match.
"""

import base64
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.core.private_files import portfolio_key_path
from app.portfolio.canonical import DECLARED, FIELD, JCS, LEGACY, Canonicalization

FORMAT = "drillbook-portfolio/1"
ALGORITHM = "Ed25519"
# An export nests six levels (document, statements, a statement, its result, a metric series, a
# point); anything much deeper is not one. Checked right after parsing (the parser itself stops
# at the recursion limit), before the canonical form's recursion walks the document.
MAX_DEPTH = 64
# One escape of a JSON string: a surrogate pair, a lone surrogate (group 1), or anything else.
_ESCAPE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(u[dD][89a-fA-F][0-9a-fA-F]{2})"
    r"|.)",
    re.DOTALL,
)


def key_path(data_dir: Path) -> Path:
    return portfolio_key_path(data_dir)


def load_or_create_key(data_dir: Path) -> Ed25519PrivateKey:
    path = key_path(data_dir)
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        # O_EXCL: two processes starting at once cannot overwrite each other's key; 0600 from
        # the first byte, not chmod-ed after a window where others could read it.
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(pem)
    return load_key(path)


def load_key(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} does not hold an Ed25519 private key")
    return key


def public_key_text(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def signed_payload(document: dict[str, Any]) -> dict[str, Any]:
    """What the signature covers: every record's digest, in order, plus when and by whom, and
    the canonical form they were computed over.

    The digests stand for the records (each digest covers its whole record), so the signature
    stays small however large the export is.
    """
    payload = {
        "format": document.get("format"),
        "exported_at": document.get("exported_at"),
        "exporter": document.get("exporter"),
        "statements": [statement.get("digest") for statement in document.get("statements", [])],
    }
    # Covered whenever declared, so removing it (to have a JCS export read the old way) breaks
    # the signature; exports made before it was declared were signed without it.
    if FIELD in document:
        payload[FIELD] = document[FIELD]
    return payload


def sign(document: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The document, declared RFC 8785, with its "signature" block over that form.

    The document's other fields are already set, its statements digested over RFC 8785
    (app/portfolio/xapi.py `digested`).
    """
    declared = document | {FIELD: JCS.name}
    value = key.sign(JCS.to_bytes(signed_payload(declared)))
    return declared | {
        "signature": {
            "algorithm": ALGORITHM,
            "public_key": public_key_text(key.public_key()),
            "covers": (
                "RFC 8785 (JCS) bytes of {canonicalization, format, exported_at, exporter, "
                "statements: each statement's digest in order}; a statement's digest is the "
                "sha256 of its own RFC 8785 bytes without its digest field"
            ),
            "value": base64.b64encode(value).decode("ascii"),
        }
    }


class UnreadableExport(ValueError):
    """The file is not a Drillbook portfolio export at all (not JSON, or the wrong shape)."""


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests arrays and objects more than `limit` levels deep (a
    scalar is 0, `[]` is 1). Level by level, without recursion, stopping past the limit."""
    level = [value]
    for _ in range(limit + 1):
        containers = [item for item in level if isinstance(item, dict | list)]
        if not containers:
            return False
        level = [
            inner
            for container in containers
            for inner in (container.values() if isinstance(container, dict) else container)
        ]
    return True


def parse_export(data: bytes) -> Any:
    """The parsed JSON of an uploaded or named file, or UnreadableExport saying why not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableExport("not a UTF-8 text file") from None
    too_deep = UnreadableExport(f"JSON nested more than {MAX_DEPTH} levels deep")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableExport(f"not a JSON file ({error})") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise UnreadableExport("a number in it has thousands of digits: not an export") from None
    except RecursionError:  # the C parser stops cleanly at the interpreter's recursion limit
        raise too_deep from None
    if nested_deeper_than(document, MAX_DEPTH):  # before anything recurses over it
        raise too_deep
    # "\ud800" parses to a lone surrogate, which no page or digest can encode as UTF-8.
    if any(escape.group(1) for escape in _ESCAPE.finditer(text)):
        raise UnreadableExport("a string holds a lone surrogate, which is not text")
    return document


@dataclass
class VerifyResult:
    problems: list[str] = field(default_factory=list)
    # How the signing key was checked: against this server's own key, or only the embedded one.
    key_note: str = ""
    statements: int = 0
    # The canonical form the digests and the signature were checked over, for a person.
    canonical_note: str = ""

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(document: Any, server_key: Ed25519PublicKey | None = None) -> VerifyResult:
    """Check every record's digest, then the signature over all of them.

    Both are computed over the canonical form the document declares. Each record whose content
    no longer matches its digest is named by index and id. Raises UnreadableExport when
    `document` is not shaped like an export at all, or declares a form this verifier lacks.
    """
    statements, signature = _shape(document)
    form = _declared_form(document)
    result = VerifyResult(statements=len(statements), canonical_note=form.description)
    for index, statement in enumerate(statements):
        recorded = statement.get("digest")
        content = {key: value for key, value in statement.items() if key != "digest"}
        name = statement.get("id", "(no id)")
        try:
            matches = recorded == form.sha256_hex(content)
        except ValueError as error:  # rfc8785: NaN, an integer beyond 2**53, a non-string key
            result.problems.append(
                f"record {index} ({name}) was altered: it holds a value no export writes ({error})"
            )
            continue
        if not matches:
            result.problems.append(
                f"record {index} ({name}) was altered: its content does not match its digest"
            )
    embedded = _embedded_key(signature, result)
    if embedded is not None:
        try:
            value = base64.b64decode(str(signature.get("value", "")), validate=True)
            embedded.verify(value, form.to_bytes(signed_payload(document)))
        except (InvalidSignature, ValueError):
            result.problems.append(
                "the signature does not match: records were added, removed, reordered or "
                "re-digested, or the export time or exporter was changed after signing"
            )
        _compare_keys(embedded, server_key, result)
    return result


def _shape(document: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UnreadableExport(f"not a Drillbook portfolio export (format {FORMAT!r} expected)")
    statements = document.get("statements")
    signature = document.get("signature")
    if not isinstance(statements, list) or not all(isinstance(s, dict) for s in statements):
        raise UnreadableExport("the export has no list of statements")
    if not isinstance(signature, dict):
        raise UnreadableExport("the export carries no signature")
    return statements, signature


def _declared_form(document: dict[str, Any]) -> Canonicalization:
    """The canonical form the export declares; absent: the one exports were signed over before.

    Chosen by the declaration alone, never by trying each form until one matches.
    """
    if FIELD not in document:
        return LEGACY
    name = document[FIELD]
    form = DECLARED.get(name) if isinstance(name, str) else None
    if form is None:
        shown = json.dumps(name)[:60]
        raise UnreadableExport(
            f"the export declares {FIELD} {shown}, which this verifier does not know: it checks "
            f'"{JCS.name}" (RFC 8785), or no {FIELD} at all (exports made before it)'
        )
    return form


def _embedded_key(signature: dict[str, Any], result: VerifyResult) -> Ed25519PublicKey | None:
    if signature.get("algorithm") != ALGORITHM:
        result.problems.append(f"the signature is not {ALGORITHM}")
        return None
    try:
        raw = base64.b64decode(str(signature.get("public_key", "")), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        result.problems.append("the embedded public key is not a valid Ed25519 key")
        return None


def _compare_keys(
    embedded: Ed25519PublicKey, server_key: Ed25519PublicKey | None, result: VerifyResult
) -> None:
    if server_key is None:
        result.key_note = (
            "checked against the public key embedded in the export only (no server key here): "
            "this shows the export is unchanged since it was signed, not which server signed it"
        )
    elif public_key_text(embedded) == public_key_text(server_key):
        result.key_note = "signed by this server's own key"
    else:
        result.key_note = "the embedded public key is not this server's"
        result.problems.append("the export was signed by another key than this server's")
