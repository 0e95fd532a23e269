"""Password hashing with argon2id (pwdlib's recommended settings)."""

import threading

from pwdlib import PasswordHash

_hasher = PasswordHash.recommended()
# Each hash or check holds 64 MiB for ~0.25 s of a core. Registrations and logins run in the
# request thread pool (40 threads): 40 at once took the web process from 232 MB to 2.2 GB. Two
# at a time keep that to 128 MiB and the cores to their number; the rest wait their turn.
ARGON2_AT_ONCE = 2
_argon2_slots = threading.BoundedSemaphore(ARGON2_AT_ONCE)
# Verified against when the account does not exist, so that a wrong username takes as long as a
# wrong password and the response time does not say which usernames exist.
_DUMMY_HASH = _hasher.hash("drillbook-no-such-user")

MIN_LENGTH = 10
MAX_LENGTH = 256


def hash_password(password: str) -> str:
    with _argon2_slots:
        return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    with _argon2_slots:
        if password_hash is None:
            _hasher.verify(password, _DUMMY_HASH)
            return False
        return _hasher.verify(password, password_hash)


def password_problem(password: str) -> str | None:
    if len(password) < MIN_LENGTH:
        return f"use at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"use at most {MAX_LENGTH} characters"
    return None
