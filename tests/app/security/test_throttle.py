"""The login throttle on its own: a real migrated database, an injected clock."""

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.core.db import make_engine
from app.security.models import LoginFailure
from app.security.throttle import PRUNE_BATCH, Limit, LoginThrottle, client_key

ATTACKER = "203.0.113.9"
LEARNER = "198.51.100.7"
START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with Session(engine) as session:
        yield session


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_throttle(clock: Clock, *, per_name: int = 3, per_client: int = 10) -> LoginThrottle:
    return LoginThrottle(
        per_name=Limit(per_name, 10), per_client=Limit(per_client, 60), clock=clock
    )


@pytest.fixture
def throttle(clock: Clock) -> LoginThrottle:
    return make_throttle(clock)


def fail(throttle: LoginThrottle, session: Session, name: str, host: str, times: int = 1) -> None:
    for _ in range(times):
        throttle.failed(session, username=name, host=host)


def test_a_name_is_locked_for_the_address_that_failed_on_it_within_the_window(
    throttle: LoginThrottle, session: Session, clock: Clock
) -> None:
    fail(throttle, session, "ann", ATTACKER, 2)
    assert throttle.refusal(session, username="ann", host=ATTACKER) is None
    clock.advance(2)
    fail(throttle, session, "ann", ATTACKER)
    refusal = throttle.refusal(session, username=" ANN ", host=ATTACKER)  # as typed at login
    assert refusal is not None and refusal.limit == "name"
    # Until the oldest of the three counted failures (at 0 s) leaves the 10 s window.
    assert refusal.retry_after_s == 8
    assert "for this account" in refusal.message and "8 s" in refusal.message
    clock.advance(8.5)
    assert throttle.refusal(session, username="ann", host=ATTACKER) is None


def test_an_address_that_did_not_fail_may_still_try_a_locked_name(
    throttle: LoginThrottle, session: Session
) -> None:
    fail(throttle, session, "ann", ATTACKER, 5)
    assert throttle.refusal(session, username="ann", host=ATTACKER) is not None
    # The learner's own machine may try (and the right password logs in, see test_accounts)...
    assert throttle.refusal(session, username="ann", host=LEARNER) is None
    # ...but one wrong password there makes it a participant, locked like the attacker.
    fail(throttle, session, "ann", LEARNER)
    refusal = throttle.refusal(session, username="ann", host=LEARNER)
    assert refusal is not None and refusal.limit == "name"


def test_a_spray_over_many_names_from_one_address_is_locked_for_every_name(
    throttle: LoginThrottle, session: Session, clock: Clock
) -> None:
    for i in range(10):
        assert throttle.refusal(session, username=f"user{i}", host=ATTACKER) is None
        fail(throttle, session, f"user{i}", ATTACKER)  # never 3 on one name
        clock.advance(1)
    refusal = throttle.refusal(session, username="someone-else", host=ATTACKER)
    assert refusal is not None and refusal.limit == "client"
    assert refusal.retry_after_s == 50  # the first failure (at 0 s) leaves the 60 s window at 60
    assert "from your network address" in refusal.message
    assert throttle.refusal(session, username="user0", host=LEARNER) is None


def test_a_success_forgets_only_that_address_s_part_in_that_name_s_failures(
    throttle: LoginThrottle, session: Session
) -> None:
    fail(throttle, session, "ann", LEARNER, 2)  # the learner's own typos
    fail(throttle, session, "ann", ATTACKER, 3)
    throttle.succeeded(session, username="ann", host=LEARNER)
    # The name stays locked for the attacker, but the learner no longer took part in it.
    assert throttle.refusal(session, username="ann", host=ATTACKER) is not None
    assert throttle.refusal(session, username="ann", host=LEARNER) is None
    # Logging in to one's own account does not reset an address's count of failures.
    fail(throttle, session, "bob", ATTACKER, 2)
    throttle.succeeded(session, username="mallory", host=ATTACKER)
    counted = session.exec(
        select(LoginFailure).where(
            LoginFailure.scope == "client", LoginFailure.key_hash == client_key(ATTACKER)
        )
    ).all()
    assert len(counted) == 5


def test_only_fixed_length_hashes_are_stored_never_what_was_posted(
    throttle: LoginThrottle, session: Session, database_url: str
) -> None:
    names = [f"secret-name-{i:03d}" for i in range(20)]
    for name in names:
        fail(throttle, session, name + "x" * 100_000, ATTACKER)  # cut to 64 before hashing
    rows = session.exec(select(LoginFailure)).all()
    assert len(rows) == 3 * len(names)
    assert {row.scope for row in rows} == {"name", "client", "pair"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", row.key_hash) for row in rows)
    session.close()
    files = Path(database_url.removeprefix("sqlite:///")).parent.glob("drillbook.sqlite3*")
    stored = b"".join(path.read_bytes() for path in files)
    assert b"secret-name" not in stored and ATTACKER.encode() not in stored


def test_expired_rows_are_pruned_in_bounded_batches(
    throttle: LoginThrottle, session: Session, clock: Clock
) -> None:
    for i in range(PRUNE_BATCH):
        fail(throttle, session, f"user{i}", f"10.0.{i // 250}.{i % 250}")
    assert len(session.exec(select(LoginFailure)).all()) == 3 * PRUNE_BATCH
    clock.advance(61)  # past the longest window
    fail(throttle, session, "late", ATTACKER)
    # One write deletes at most PRUNE_BATCH expired rows; the next ones the rest.
    assert len(session.exec(select(LoginFailure)).all()) == 2 * PRUNE_BATCH + 3
    fail(throttle, session, "later", ATTACKER)
    fail(throttle, session, "latest", ATTACKER)
    assert len(session.exec(select(LoginFailure)).all()) == 9


def test_the_counts_survive_a_restart(database_url: str, clock: Clock) -> None:
    first = make_engine(database_url)
    with Session(first) as session:
        fail(make_throttle(clock), session, "ann", ATTACKER, 3)
    first.dispose()
    second = make_engine(database_url)
    with Session(second) as session:
        assert make_throttle(clock).refusal(session, username="ann", host=ATTACKER) is not None
    second.dispose()


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("2001:db8:1:2::1", "2001:db8:1:2:ffff::9", True),  # one /64: one machine or network
        ("2001:db8:1:2::1", "2001:db8:1:3::1", False),
        ("::ffff:192.0.2.1", "192.0.2.1", True),
        ("192.0.2.1", "192.0.2.2", False),
        (None, "", True),
    ],
)
def test_client_addresses_are_counted_by_the_network_one_machine_holds(
    one: str | None, other: str | None, same: bool
) -> None:
    assert (client_key(one) == client_key(other)) is same


def test_registrations_are_counted_per_address_for_their_own_window(
    session: Session, clock: Clock
) -> None:
    throttle = LoginThrottle(
        per_name=Limit(3, 10), per_client=Limit(10, 60), registrations=Limit(2, 3600), clock=clock
    )
    for _ in range(2):
        assert throttle.registration_refusal(session, host=LEARNER) is None
        throttle.registered(session, host=LEARNER)
    refusal = throttle.registration_refusal(session, host=LEARNER)
    assert refusal is not None and refusal.retry_after_s == 3600
    assert throttle.registration_refusal(session, host=ATTACKER) is None  # another address
    clock.advance(61)  # past the login windows: a failed login's pruning keeps them
    fail(throttle, session, "late", ATTACKER)
    assert throttle.registration_refusal(session, host=LEARNER) is not None
    clock.advance(3600)
    assert throttle.registration_refusal(session, host=LEARNER) is None
    fail(throttle, session, "later", ATTACKER)  # ... and prunes them once theirs is over
    registered = select(LoginFailure).where(LoginFailure.scope == "register")
    assert session.exec(registered).all() == []


def test_counting_waits_out_a_long_write_lock_instead_of_failing(
    database_url: str, throttle: LoginThrottle
) -> None:
    """On SQLite every write waits for the one write lock. 40 registrations at once on a loaded
    machine waited past the old 5 s busy timeout and answered 500 ("database is locked"); a
    request now waits up to 30 s (in the thread pool: the event loop is not held)."""
    if not database_url.startswith("sqlite"):
        pytest.skip("the busy timeout is SQLite's")
    engine = make_engine(database_url)
    path = database_url.removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held from outside
    threading.Timer(6.0, holder.execute, args=("COMMIT",)).start()
    began = time.monotonic()
    with Session(engine) as session:
        throttle.registered(session, host=LEARNER)
    assert time.monotonic() - began >= 5.5
    holder.close()
    with Session(engine) as session:
        assert session.exec(select(LoginFailure)).all()
    engine.dispose()
