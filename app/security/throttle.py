"""Login throttling, kept in the database: per client address and per username.

Every failed login stores three small rows in `login_failure` (see app/models/throttle.py), each
with only a sha256 hash, never the raw value:

- `client`: the address the request came from (an IPv6 address counts by its /64, which one
  machine usually holds whole);
- `name`: the lower-cased username tried (cut to the longest a username can be);
- `pair`: that name tried from that address.

Two independent limits, each a number of failures within a sliding window (app/core/config.py):

1. **Per client** (`login_client_max_failures` per `login_client_window_s`): an address that has
   failed that often gets 429 for every name. A spray over many names from one address is stopped
   here; the per-name limit never sees it.
2. **Per name** (`login_max_failures` per `login_window_s`): once a name has failed that often, from
   any addresses, it is locked **only for the addresses that took part in those failures** (that
   have a `pair` row in the window). An address that has not failed on this name, such as the
   real learner's own, may still try it: the right password logs in, a wrong one makes that
   address a participant, locked like the others. So an attacker cannot lock a learner out by
   failing on their name, and a distributed guesser gets one guess per fresh address.

A successful login deletes that name's `pair` rows of that address only: the learner's own typos
no longer make their address a participant in a later lock. It keeps the `name` rows (the
attacker's failures still count towards the name's lock) and the `client` rows (logging in to an
account one owns must not reset the count of an address spraying other names).

Registrations are counted the same way, per address (`register` rows: one per account made,
`registration_client_max` per `registration_client_window_s`), checked before any password is
hashed.

Rows older than their limit's window are deleted on every write, at most PRUNE_BATCH at a time, so
the table holds about the failures of one window whatever is posted, and no request does unbounded
work. The counts live in the database: a restart does not wipe them, and several web processes on
one database share them. The check and the later write are not one transaction: requests racing
in parallel can each pass the check before any of their failures is stored, so a burst can
overshoot a limit by the number of requests served at once (once).
"""

import hashlib
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import and_, or_
from sqlmodel import Session, col, delete, select

from app.models.time import as_utc, utcnow
from app.security.models import LoginFailure

# Usernames are at most 64 characters (app/models/accounts.py); nothing longer is hashed.
MAX_NAME_CHARS = 64
# Expired rows deleted per failed login: enough to keep up with any rate of failures.
PRUNE_BATCH = 200

# "register": an account made from an address (registration, like a failed login, costs an
# argon2 hash of the server's memory and CPU: it is counted per address the same way).
Scope = Literal["name", "client", "pair", "register"]


@dataclass(frozen=True)
class Limit:
    max_failures: int
    window_s: float

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.window_s)


@dataclass(frozen=True)
class Refusal:
    """Why a login is not even tried, and for how many whole seconds more."""

    limit: Literal["name", "client", "register"]
    retry_after_s: int

    @property
    def message(self) -> str:
        if self.limit == "register":
            return (
                "Too many accounts were made from your network address lately. "
                f"Try again in {self.retry_after_s} s."
            )
        if self.limit == "client":
            reason = "Too many failed logins from your network address"
        else:
            reason = "Too many failed logins for this account from your network address"
        return f"{reason}. Try again in {self.retry_after_s} s."


def name_key(username: str) -> str:
    return _hash("name", username.strip().lower()[:MAX_NAME_CHARS])


def client_key(host: str | None) -> str:
    return _hash("client", _client_identity(host))


def pair_key(username: str, host: str | None) -> str:
    name = username.strip().lower()[:MAX_NAME_CHARS]
    return _hash("pair", f"{name}\n{_client_identity(host)}")


def _hash(scope: Scope, value: str) -> str:
    return hashlib.sha256(f"{scope}:{value}".encode()).hexdigest()


def _client_identity(host: str | None) -> str:
    if not host:
        return "unknown"
    host = host[:64]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # not an IP address (e.g. a test client's name): itself
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class LoginThrottle:
    def __init__(
        self,
        *,
        per_name: Limit,
        per_client: Limit,
        registrations: Limit = Limit(100, 3600.0),
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.per_name = per_name
        self.per_client = per_client
        # Accounts made per address: generous, since a class behind one school address
        # registers at once; what it stops is one address making accounts without end.
        self.registrations = registrations
        self._clock = clock

    def registration_refusal(self, session: Session, *, host: str | None) -> Refusal | None:
        """Why an account must not be made from this address now, or None if it may."""
        wait = self._wait(session, "register", client_key(host), self.registrations, self._clock())
        return None if wait is None else Refusal("register", wait)

    def registered(self, session: Session, *, host: str | None) -> None:
        """Count an account about to be made from this address."""
        now = self._clock()
        self._prune(session, now)
        session.add(LoginFailure(scope="register", key_hash=client_key(host), failed_at=now))
        session.commit()

    def refusal(self, session: Session, *, username: str, host: str | None) -> Refusal | None:
        """Why this login must not be tried now, or None if it may."""
        now = self._clock()
        wait = self._wait(session, "client", client_key(host), self.per_client, now)
        if wait is not None:
            return Refusal("client", wait)
        wait = self._wait(session, "name", name_key(username), self.per_name, now)
        if wait is not None and self._took_part(session, username, host, now):
            return Refusal("name", wait)
        return None

    def failed(self, session: Session, *, username: str, host: str | None) -> None:
        now = self._clock()
        self._prune(session, now)
        for scope, key in (
            ("client", client_key(host)),
            ("name", name_key(username)),
            ("pair", pair_key(username, host)),
        ):
            session.add(LoginFailure(scope=scope, key_hash=key, failed_at=now))
        session.commit()

    def succeeded(self, session: Session, *, username: str, host: str | None) -> None:
        session.exec(
            delete(LoginFailure).where(
                col(LoginFailure.scope) == "pair",
                col(LoginFailure.key_hash) == pair_key(username, host),
            )
        )
        session.commit()

    def _wait(
        self, session: Session, scope: Scope, key: str, limit: Limit, now: datetime
    ) -> int | None:
        """Whole seconds until fewer than max_failures remain in the window, or None if already."""
        # The max_failures-th newest failure: once it leaves the window, the count is under.
        oldest_counted = session.exec(
            select(LoginFailure.failed_at)
            .where(
                LoginFailure.scope == scope,
                LoginFailure.key_hash == key,
                LoginFailure.failed_at > now - limit.window,
            )
            .order_by(col(LoginFailure.failed_at).desc())
            .offset(limit.max_failures - 1)
            .limit(1)
        ).first()
        if oldest_counted is None:
            return None
        remaining = (as_utc(oldest_counted) + limit.window - now).total_seconds()
        return max(1, int(remaining) + (0 if remaining.is_integer() else 1))

    def _took_part(self, session: Session, username: str, host: str | None, now: datetime) -> bool:
        return (
            session.exec(
                select(LoginFailure.id).where(
                    LoginFailure.scope == "pair",
                    LoginFailure.key_hash == pair_key(username, host),
                    LoginFailure.failed_at > now - self.per_name.window,
                )
            ).first()
            is not None
        )

    def _prune(self, session: Session, now: datetime) -> None:
        # Each row is kept for its own limit's window: a failed login's, or a registration's.
        login_cutoff = now - max(self.per_name.window, self.per_client.window)
        registration_cutoff = now - self.registrations.window
        is_registration = col(LoginFailure.scope) == "register"
        expired = (
            select(LoginFailure.id)
            .where(
                or_(
                    and_(~is_registration, col(LoginFailure.failed_at) <= login_cutoff),
                    and_(is_registration, col(LoginFailure.failed_at) <= registration_cutoff),
                )
            )
            .order_by(col(LoginFailure.failed_at))
            .limit(PRUNE_BATCH)
        )
        session.exec(
            delete(LoginFailure).where(col(LoginFailure.id).in_(expired.scalar_subquery()))
        )
