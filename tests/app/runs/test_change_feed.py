"""Each web process's change feed wakes the streams of an attempt that changed: PostgreSQL's
NOTIFY on a dedicated connection (which comes back, and wakes every stream, after the connection
is cut), or a poller on SQLite."""

import asyncio
from collections.abc import Iterator

import psycopg
import pytest
from sqlmodel import Session

from app.core.db import make_engine
from app.core.migrate import upgrade
from app.runs import evidence
from app.runs.attempt_changes import CHANNEL, Change, announce
from app.runs.broker import AttemptEventBroker, Subscription
from app.runs.change_feed import APPLICATION_NAME, PostgresListener, SqlitePoller
from tests.aio import run_to_end
from tests.app.factories import add_unfinished_attempt
from tests.postgres import throwaway_database


async def woken(subscription: Subscription, timeout: float = 5) -> bool:
    try:
        await asyncio.wait_for(subscription.changed.wait(), timeout)
    except TimeoutError:
        return False
    subscription.changed.clear()
    return True


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with throwaway_database() as url:
        upgrade(url)
        yield url


def plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def test_a_notify_wakes_the_attempts_streams_and_survives_a_cut_connection(
    postgres_url: str,
) -> None:
    async def scenario() -> None:
        broker = AttemptEventBroker()
        watching, other = broker.subscribe(7), broker.subscribe(8)
        listener = PostgresListener(postgres_url, broker)
        listener.start()
        try:
            assert await asyncio.to_thread(listener.connected.wait, 10)
            with psycopg.connect(plain(postgres_url), autocommit=True) as connection:
                connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, Change(7, 42).payload))
                assert await woken(watching)
                assert not other.changed.is_set()  # only attempt 7's streams

                # The connection is cut under the listener: it reconnects and wakes everyone,
                # since changes may have gone by unheard.
                listener.connected.clear()
                # This database's listener only: another suite on the same server has its own.
                cut = connection.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = %s AND datname = current_database()",
                    (APPLICATION_NAME,),
                ).fetchall()
                assert cut == [(True,)]
                assert await woken(other, timeout=15)
                assert await asyncio.to_thread(listener.connected.wait, 10)
                assert listener.connections == 2
                watching.changed.clear()
                connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, Change(7, 0).payload))
                assert await woken(watching)
        finally:
            listener.stop()

    run_to_end(scenario)


def test_an_announcement_goes_out_only_when_its_transaction_commits(postgres_url: str) -> None:
    engine = make_engine(postgres_url)
    attempt_id = add_unfinished_attempt(engine)
    with psycopg.connect(plain(postgres_url), autocommit=True) as listening:
        listening.execute(f"LISTEN {CHANNEL}")
        with Session(engine) as session:
            announce(session, Change(attempt_id, 3))
            session.rollback()
        assert list(listening.notifies(timeout=0.5)) == []
        with Session(engine) as session:
            announce(session, Change(attempt_id, 3))
            session.commit()
        notices = list(listening.notifies(timeout=2, stop_after=1))
        assert [n.payload for n in notices] == [f"{attempt_id}:3"]
    engine.dispose()


def test_on_sqlite_the_poller_wakes_the_streams_of_a_changed_attempt(database_url: str) -> None:
    engine = make_engine(database_url)
    attempt_id = add_unfinished_attempt(engine)
    quiet_id = add_unfinished_attempt(engine)

    async def scenario() -> None:
        broker = AttemptEventBroker()
        watching, quiet = broker.subscribe(attempt_id), broker.subscribe(quiet_id)
        poller = SqlitePoller(engine, broker)
        await asyncio.to_thread(poller.poll)  # the first look sees both: state noted
        watching.changed.clear()
        quiet.changed.clear()
        with Session(engine) as session:
            evidence.insert_points(session, attempt_id=attempt_id, points=[("loss", 0, 1.0)])
            session.commit()
        await asyncio.to_thread(poller.poll)
        assert await woken(watching, timeout=1)
        assert not quiet.changed.is_set()

    run_to_end(scenario)
    engine.dispose()
