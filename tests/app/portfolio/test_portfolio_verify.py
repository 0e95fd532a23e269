"""Integrity of an export: one altered byte is found and its record named, by the CLI and by the
upload page; a signature over other content, or by another key, fails."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from anyio import BrokenWorkerProcess
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient

import app.portfolio.routes as portfolio_routes
from app.portfolio.signing import MAX_DEPTH, key_path, nested_deeper_than, sign, verify
from app.portfolio.xapi import digested
from tests.app.factories import page_token
from tests.app.portfolio_helpers import alter_one_byte, classroom

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def export(anonymous: TestClient) -> bytes:
    room = classroom(anonymous)
    return room.clients["learner-a"].get("/portfolio/export.json").content


def data_dir(client: TestClient) -> Path:
    path: Path = client.app.state.settings.data_dir  # type: ignore[attr-defined]
    return path


def run_cli(file: Path, data: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"DRILLBOOK_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "app", "verify-export", str(file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_signing_key_is_a_private_file_outside_the_database(anonymous: TestClient) -> None:
    path = key_path(data_dir(anonymous))
    assert path.exists()
    assert path.stat().st_mode & 0o777 == 0o600
    assert b"PRIVATE KEY" in path.read_bytes()


def test_cli_says_intact_and_that_the_key_is_this_servers(
    export: bytes, anonymous: TestClient, tmp_path: Path
) -> None:
    file = tmp_path / "export.json"
    file.write_bytes(export)
    done = run_cli(file, data_dir(anonymous))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "intact: 5 records" in done.stdout
    assert "signed by this server's own key" in done.stdout
    # Elsewhere (no server key), only the embedded key can be checked, and the output says so.
    elsewhere = run_cli(file, tmp_path / "no-key-here")
    assert elsewhere.returncode == 0
    assert "embedded in the export only" in elsewhere.stdout


@pytest.mark.parametrize("index", [0, 1, 4])
def test_one_altered_byte_fails_the_cli_naming_the_record(
    export: bytes, anonymous: TestClient, tmp_path: Path, index: int
) -> None:
    document = json.loads(export)
    record_id = document["statements"][index]["id"] if index < 2 else None
    if record_id is None:  # a submission has no prediction: alter an attempt, the 2nd one
        index, record_id = 1, document["statements"][1]["id"]
    file = tmp_path / "export.json"
    file.write_bytes(alter_one_byte(export, index))
    done = run_cli(file, data_dir(anonymous))
    assert done.returncode == 1, done.stdout + done.stderr
    problems = [line for line in done.stdout.splitlines() if line.startswith("  - ")]
    assert problems == [
        f"  - record {index} ({record_id}) was altered: its content does not match its digest"
    ]


def test_an_altered_digest_field_is_named_too(
    export: bytes, anonymous: TestClient, tmp_path: Path
) -> None:
    document = json.loads(export)
    digest = document["statements"][2]["digest"].encode()
    position = export.index(digest)
    flipped = b"0" if export[position : position + 1] != b"0" else b"1"
    file = tmp_path / "export.json"
    file.write_bytes(export[:position] + flipped + export[position + 1 :])
    done = run_cli(file, data_dir(anonymous))
    assert done.returncode == 1
    assert f"record 2 ({document['statements'][2]['id']}) was altered" in done.stdout


def test_cli_exit_2_for_an_unreadable_file(tmp_path: Path) -> None:
    for name, content in (("broken.json", b"{not json"), ("other.json", b'{"a": 1}')):
        file = tmp_path / name
        file.write_bytes(content)
        done = run_cli(file, tmp_path)
        assert done.returncode == 2, done.stdout
        assert "unreadable" in done.stderr
    assert run_cli(tmp_path / "missing.json", tmp_path).returncode == 2


def test_a_signature_over_different_content_fails(export: bytes) -> None:
    document = json.loads(export)
    assert verify(document).intact
    # A record changed and re-digested: each digest matches, the signature no longer does.
    forged = copy.deepcopy(document)
    record = {k: v for k, v in forged["statements"][0].items() if k != "digest"}
    record["result"]["signature"]["final_loss"] = 0.0001
    forged["statements"][0] = digested(record)
    result = verify(forged)
    assert not result.intact
    assert result.problems == [
        problem for problem in result.problems if "signature does not match" in problem
    ]
    # A record dropped, or the export time moved: the signature fails.
    dropped = copy.deepcopy(document)
    del dropped["statements"][3]
    assert any("signature does not match" in p for p in verify(dropped).problems)
    moved = copy.deepcopy(document) | {"exported_at": "2020-01-01T00:00:00Z"}
    assert any("signature does not match" in p for p in verify(moved).problems)
    # Another export's signature pasted on this content.
    other = sign(document | {"exported_at": "2021-01-01T00:00:00Z"}, Ed25519PrivateKey.generate())
    pasted = copy.deepcopy(document)
    pasted["signature"] = other["signature"]
    assert any("signature does not match" in p for p in verify(pasted).problems)


def test_a_forgery_signed_with_another_key_is_caught_on_the_server(
    export: bytes, anonymous: TestClient
) -> None:
    document: dict[str, Any] = json.loads(export)
    forger = Ed25519PrivateKey.generate()
    record = {k: v for k, v in document["statements"][0].items() if k != "digest"}
    record["result"]["status"] = "made up"
    forged = sign(
        {k: v for k, v in document.items() if k != "signature"}
        | {"statements": [digested(record), *document["statements"][1:]]},
        forger,
    )
    assert verify(forged).intact  # self-consistent: only the key can tell
    server_key = anonymous.app.state.signing_key.public_key()  # type: ignore[attr-defined]
    result = verify(forged, server_key=server_key)
    assert result.problems == ["the export was signed by another key than this server's"]


def upload(client: TestClient, content: bytes, token: str | None = None) -> Any:
    token = token or page_token(client)
    return client.post(
        "/portfolio/verify",
        data={"csrf_token": token},
        files={"file": ("export.json", content, "application/json")},
    )


def test_the_upload_page_says_intact_or_names_the_altered_record(
    export: bytes, anonymous: TestClient
) -> None:
    visitor = TestClient(anonymous.app)  # anyone may check an export, logged in or not
    page = visitor.get("/portfolio/verify")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text
    intact = upload(visitor, export)
    assert intact.status_code == 200
    assert (
        'id="verify-intact"' in intact.text and "signed by this server&#39;s own key" in intact.text
    )
    document = json.loads(export)
    altered = upload(visitor, alter_one_byte(export, 1))
    assert altered.status_code == 200
    assert 'id="verify-altered"' in altered.text
    assert f"record 1 ({document['statements'][1]['id']}) was altered" in altered.text
    unreadable = upload(visitor, b"\xff{not json")
    assert unreadable.status_code == 422 and 'id="verify-error"' in unreadable.text
    visitor.close()


def test_the_upload_page_refuses_a_file_over_20_mb(anonymous: TestClient) -> None:
    huge = b'{"format": "drillbook-portfolio/1", "pad": "' + b"x" * (20 * 1024 * 1024 + 10) + b'"}'
    response = upload(anonymous, huge)
    assert response.status_code == 413


def test_the_upload_needs_the_csrf_token(export: bytes, anonymous: TestClient) -> None:
    page_token(anonymous)
    response = anonymous.post(
        "/portfolio/verify", files={"file": ("export.json", export, "application/json")}
    )
    assert response.status_code == 403


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def test_an_export_nests_well_within_the_depth_limit(export: bytes) -> None:
    document = json.loads(export)
    levels = depth(document)
    assert 4 < levels <= 12 < MAX_DEPTH
    assert not nested_deeper_than(document, levels)
    assert nested_deeper_than(document, levels - 1)


@pytest.mark.parametrize(
    "text", ["1", "[]", "[[1], 2]", '{"a": [1, {"b": []}], "c": {}}', '[[[["x"]]], [], {"d": 1}]']
)
def test_nested_deeper_than_agrees_with_a_recursive_count(text: str) -> None:
    value = json.loads(text)
    for limit in range(6):
        assert nested_deeper_than(value, limit) is (depth(value) > limit)


def test_the_upload_page_refuses_deep_json_and_lone_surrogates_by_name(
    export: bytes, anonymous: TestClient
) -> None:
    deep = upload(anonymous, b"[" * 200_000 + b"]" * 200_000)
    assert deep.status_code == 422 and 'id="verify-error"' in deep.text
    assert f"nested more than {MAX_DEPTH} levels deep" in deep.text
    # A record's id turned into a lone surrogate: the page would name it and fail to encode it.
    document = json.loads(export)
    document["statements"][1]["id"] = "\ud800"
    surrogate = upload(anonymous, json.dumps(document).encode())
    assert surrogate.status_code == 422 and "lone surrogate" in surrogate.text


def test_cli_exit_2_for_deep_json(tmp_path: Path) -> None:
    file = tmp_path / "deep.json"
    file.write_bytes(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    done = run_cli(file, tmp_path)
    assert done.returncode == 2 and "nested more than" in done.stderr


def test_a_check_whose_process_dies_says_so(
    anonymous: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check runs in a process of its own; if that process dies (killed, out of memory),
    the page says the check stopped, with a 503, instead of a 500."""

    async def dies(data: bytes, server_key: object) -> None:
        raise BrokenWorkerProcess

    monkeypatch.setattr(portfolio_routes, "check_upload", dies)
    answer = upload(anonymous, b"{}")
    assert answer.status_code == 503
    assert "The check stopped before it finished" in answer.text
