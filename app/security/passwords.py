"""Password hashing with argon2id (pwdlib's recommended settings)."""

from pwdlib import PasswordHash

_hasher = PasswordHash.recommended()
# Verified against when the account does not exist, so that a wrong username takes as long as a
# wrong password and the response time does not say which usernames exist.
_DUMMY_HASH = _hasher.hash("drillbook-no-such-user")

MIN_LENGTH = 10
MAX_LENGTH = 256


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
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
