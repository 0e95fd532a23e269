"""`python -m app verify-export FILE.json`: the upload page's check, for a terminal or a script.

Exit status 0: intact; 1: altered (each problem on its own line); 2: not readable as an export,
including one that declares a canonical form this version does not know.
"""

import sys
from pathlib import Path

from app.portfolio.signing import UnreadableExport, key_path, load_key, parse_export, verify

INTACT, ALTERED, UNREADABLE = 0, 1, 2


def verify_export(file: str, *, data_dir: Path) -> int:
    try:
        document = parse_export(Path(file).read_bytes())
    except (OSError, UnreadableExport) as error:
        print(f"unreadable: {file}: {error}", file=sys.stderr)
        return UNREADABLE
    # On the server, the export must also carry this server's public key; elsewhere only the
    # embedded key can be checked, and the output says so.
    server_key = load_key(key_path(data_dir)).public_key() if key_path(data_dir).exists() else None
    try:
        result = verify(document, server_key=server_key)
    except UnreadableExport as error:
        print(f"unreadable: {file}: {error}", file=sys.stderr)
        return UNREADABLE
    if result.intact:
        print(f"intact: {result.statements} records match their digests and the signature holds")
        print(f"key: {result.key_note}")
        print(f"canonical form: {result.canonical_note}")
        return INTACT
    print(f"ALTERED: {file}")
    for problem in result.problems:
        print(f"  - {problem}")
    if result.key_note:
        print(f"key: {result.key_note}")
    return ALTERED
