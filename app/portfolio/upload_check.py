"""The whole check of an uploaded export, from its bytes, in a process of its own.

Parsing and digesting an export near the 20 MB limit is seconds of CPU. On the loop it held every
page and live stream of the class for 3-5 s. A thread is not enough either: `json.loads` is one
C call that keeps the GIL for the whole parse, and a real server's pages waited 0.18-0.66 s
behind it (tests/app/portfolio/test_upload_check.py). A separate process has a GIL of its own. What
crosses to it and back is plain data: the file's bytes, the server's public key as its 32 raw
bytes, and the small VerifyResult or UnreadableExport.
"""

from anyio import to_process
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app.portfolio.signing import VerifyResult, parse_export, verify


def raw_public_key(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def check_bytes(data: bytes, server_key: bytes | None) -> VerifyResult:
    """What the upload page says of `data`; raises UnreadableExport when it is no export."""
    key = Ed25519PublicKey.from_public_bytes(server_key) if server_key is not None else None
    return verify(parse_export(data), server_key=key)


async def check_upload(data: bytes, server_key: Ed25519PublicKey) -> VerifyResult:
    """`check_bytes` in a worker process (anyio keeps them warm for later uploads). At most as
    many checks run at once as the machine has cores: more uploads wait their turn instead of
    taking the cores from the class's runs and pages."""
    return await to_process.run_sync(check_bytes, data, raw_public_key(server_key))
