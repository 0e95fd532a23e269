"""The bytes an export's digests and signature cover: RFC 8785 (JCS) for every new export, so a
reader in another language rebuilds them; the old Python-JSON form still verifies for exports that
declare nothing; a declaration this verifier does not know is refused, never guessed around."""

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from fastapi.testclient import TestClient

from app.portfolio.export import document_bytes
from app.portfolio.signing import (
    FORMAT,
    UnreadableExport,
    parse_export,
    public_key_text,
    sign,
    verify,
)
from app.portfolio.xapi import digested
from drills.core.digest import canonical_json
from tests.app.portfolio.test_portfolio_verify import data_dir, run_cli, upload
from tests.app.portfolio_helpers import alter_one_byte, classroom

# What a reader in another language meets: a whole float, a small one, and a non-ASCII letter.
AWKWARD = {
    "id": "drillbook:test:awkward",
    "result": {"completion": 1.0, "loss": 1e-07, "response": "é"},
}
# Those as RFC 8785 writes them, by hand: `1`, `1e-7`, the two UTF-8 bytes of é.
AWKWARD_JCS = (
    b'{"id":"drillbook:test:awkward","result":{"completion":1,"loss":1e-7,"response":"\xc3\xa9"}}'
)


def jcs_sha256(value: Any) -> str:
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def server_key(client: TestClient) -> Ed25519PrivateKey:
    key: Ed25519PrivateKey = client.app.state.signing_key  # type: ignore[attr-defined]
    return key


def embedded_key(document: dict[str, Any]) -> Ed25519PublicKey:
    raw = base64.b64decode(document["signature"]["public_key"])
    return Ed25519PublicKey.from_public_bytes(raw)


def signed_the_old_way(document: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """`document` (with AWKWARD added) as the server signed exports before RFC 8785: the code of
    that time, kept here. No canonicalization field; each digest, and the signature over the
    digests, over the drills' canonical JSON (Python's json text)."""

    def old_bytes(value: Any) -> bytes:
        return canonical_json(value).encode("utf-8")

    statements = []
    for statement in [*document["statements"], AWKWARD]:
        content = {k: v for k, v in statement.items() if k != "digest"}
        statements.append(content | {"digest": hashlib.sha256(old_bytes(content)).hexdigest()})
    head = {key: document[key] for key in ("format", "exported_at", "exporter")}
    payload = head | {"statements": [statement["digest"] for statement in statements]}
    return head | {
        "statements": statements,
        "signature": {
            "algorithm": "Ed25519",
            "public_key": public_key_text(key.public_key()),
            "covers": "sha256 digests of every statement in order, format, exported_at, exporter",
            "value": base64.b64encode(key.sign(old_bytes(payload))).decode("ascii"),
        },
    }


@pytest.fixture
def export(anonymous: TestClient) -> bytes:
    room = classroom(anonymous)
    return room.clients["learner-a"].get("/portfolio/export.json").content


@pytest.fixture
def old_export(export: bytes, anonymous: TestClient) -> bytes:
    """A file as learners downloaded it before RFC 8785, signed by this server's key."""
    return document_bytes(signed_the_old_way(json.loads(export), server_key(anonymous)))


def test_a_new_export_is_digested_and_signed_over_jcs(export: bytes, anonymous: TestClient) -> None:
    document = json.loads(export)
    assert document["canonicalization"] == "jcs"
    for statement in document["statements"]:
        content = {k: v for k, v in statement.items() if k != "digest"}
        assert statement["digest"] == jcs_sha256(content)
    # The signature, rebuilt with nothing but rfc8785 and the embedded key, as any reader would.
    payload = {
        "canonicalization": "jcs",
        "format": document["format"],
        "exported_at": document["exported_at"],
        "exporter": document["exporter"],
        "statements": [statement["digest"] for statement in document["statements"]],
    }
    signature = base64.b64decode(document["signature"]["value"])
    embedded_key(document).verify(signature, rfc8785.dumps(payload))  # raises if not
    result = verify(document, server_key(anonymous).public_key())
    assert result.intact and result.statements == 5
    assert "RFC 8785" in result.canonical_note
    page = upload(anonymous, export)
    assert 'id="verify-intact"' in page.text and "RFC 8785 (JCS)" in page.text


def test_whole_and_small_floats_and_non_ascii_text_are_signed_as_jcs_writes_them() -> None:
    statement = digested(AWKWARD)
    assert statement["digest"] == hashlib.sha256(AWKWARD_JCS).hexdigest()
    # Python's json text differs on every one of the three: this is what moved.
    assert canonical_json(AWKWARD).encode() != AWKWARD_JCS
    assert all(text in canonical_json(AWKWARD) for text in ('"completion":1.0', "1e-07", "\\u00e9"))
    key = Ed25519PrivateKey.generate()
    unsigned = {
        "format": FORMAT,
        "exported_at": "2026-01-01T00:00:00Z",
        "exporter": {"name": "Drillbook", "by": "zoé"},
        "statements": [statement],
    }
    document = sign(unsigned, key)
    payload = (
        b'{"canonicalization":"jcs","exported_at":"2026-01-01T00:00:00Z",'
        b'"exporter":{"by":"zo\xc3\xa9","name":"Drillbook"},"format":"drillbook-portfolio/1",'
        b'"statements":["' + statement["digest"].encode() + b'"]}'
    )
    key.public_key().verify(base64.b64decode(document["signature"]["value"]), payload)
    # Through the file and back, as a verifier reads it: intact.
    assert verify(parse_export(document_bytes(document))).intact


def test_what_jcs_cannot_write_is_exported_as_text_and_refused_as_a_number() -> None:
    statement = digested(
        {
            "id": "drillbook:test:edges",
            "context": {"seed": 2**63 - 1, "low": -(2**53), "exact": 2**53 - 1},
            "result": {"nan": float("nan"), "up": float("inf"), "down": float("-inf")},
        }
    )
    # Non-finite floats as strings, as before; integers a double cannot hold as their digits.
    assert statement["context"] == {
        "seed": "9223372036854775807",
        "low": "-9007199254740992",
        "exact": 2**53 - 1,
    }
    assert statement["result"] == {"nan": "nan", "up": "inf", "down": "-inf"}
    document = sign(
        {"format": FORMAT, "exported_at": None, "exporter": None, "statements": [statement]},
        Ed25519PrivateKey.generate(),
    )
    assert verify(parse_export(document_bytes(document))).intact
    # A number JCS cannot write is one no export holds: the record is named, not a crash.
    for number in ("9223372036854775807", "NaN", "1e400"):
        text = document_bytes(document).replace(b'"9223372036854775807"', number.encode())
        result = verify(parse_export(text))
        (problem,) = result.problems
        assert problem.startswith("record 0 (drillbook:test:edges) was altered: it holds a value")


def test_an_export_signed_the_old_way_still_verifies(
    old_export: bytes, anonymous: TestClient, tmp_path: Path
) -> None:
    document = json.loads(old_export)
    assert "canonicalization" not in document
    # Not the same bytes as JCS: the awkward statement's digest differs between the two forms.
    assert document["statements"][-1]["digest"] != jcs_sha256(AWKWARD)
    result = verify(document, server_key(anonymous).public_key())
    assert result.intact, result.problems
    assert result.key_note == "signed by this server's own key"
    assert "made before" in result.canonical_note
    page = upload(anonymous, old_export)
    assert 'id="verify-intact"' in page.text and "made before" in page.text
    file = tmp_path / "old.json"
    file.write_bytes(old_export)
    done = run_cli(file, data_dir(anonymous))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "intact: 6 records" in done.stdout and "made before" in done.stdout


@pytest.mark.parametrize("form", ["jcs", "old"])
def test_one_edited_statement_fails_under_either_form(
    form: str, export: bytes, old_export: bytes
) -> None:
    raw = export if form == "jcs" else old_export
    record_id = json.loads(raw)["statements"][1]["id"]
    result = verify(parse_export(alter_one_byte(raw, 1)))
    assert result.problems == [
        f"record 1 ({record_id}) was altered: its content does not match its digest"
    ]


def test_the_declared_form_cannot_be_swapped(export: bytes, old_export: bytes) -> None:
    # A new export stripped of its declaration: the signature covered it.
    stripped = {k: v for k, v in json.loads(export).items() if k != "canonicalization"}
    assert any("signature does not match" in p for p in verify(stripped).problems)
    # An old export that claims JCS: its awkward record no longer matches, nor the signature.
    claimed = json.loads(old_export) | {"canonicalization": "jcs"}
    problems = verify(claimed).problems
    assert f"record 5 ({AWKWARD['id']}) was altered" in problems[0]
    assert "signature does not match" in problems[-1]


@pytest.mark.parametrize("declared", ["jcs2", "JCS", None, 1, ["jcs"]])
def test_an_unknown_declared_form_is_refused_by_name(
    declared: Any, export: bytes, anonymous: TestClient
) -> None:
    document = copy.deepcopy(json.loads(export)) | {"canonicalization": declared}
    with pytest.raises(UnreadableExport, match="which this verifier does not know"):
        verify(document)
    page = upload(anonymous, document_bytes(document))
    assert page.status_code == 422 and 'id="verify-error"' in page.text
    assert "does not know" in page.text and "RFC 8785" in page.text


def test_cli_exit_2_for_an_unknown_declared_form(
    export: bytes, anonymous: TestClient, tmp_path: Path
) -> None:
    file = tmp_path / "future.json"
    file.write_bytes(document_bytes(json.loads(export) | {"canonicalization": "jcs/2"}))
    done = run_cli(file, data_dir(anonymous))
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'declares canonicalization "jcs/2", which this verifier does not know' in done.stderr
