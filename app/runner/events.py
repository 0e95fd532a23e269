"""What the runner reports about the runs it dispatched, and the sink it reports them to.

Workers store their runs' progress themselves (`app.runner.progress_store`); these are what this
web process hears first: a lost worker, a task that never ran, a record that was not stored.

The dispatcher knows nothing of the database or the live streams: it hands each event to the sink
it was given (`app.runs.evidence_writer.EvidenceWriter` in the web process, a list in a test), so
the dependency points one way, from the services to the runner.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.runs.models import AttemptStatus

# (metric name, step, value); non-finite values arrive as "nan"/"inf"/"-inf" strings.
Point = tuple[str, int, float | str | None]


@dataclass(frozen=True)
class Finished:
    attempt_id: int
    record: dict[str, Any]


@dataclass(frozen=True)
class Ended:
    """The attempt ends without a record from the worker (lost worker, watchdog, shutdown).

    `resend`, when given, sends the attempt to the workers again instead: the runner offers it
    when a worker died under the attempt's task, which is safe to take only if no worker ever
    started the run (its attempt is still `queued`): right after the pool lost its workers, the
    scheduler may hand a new run to one that is already gone."""

    attempt_id: int
    status: AttemptStatus
    error: str
    resend: Callable[[], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ReplayDone:
    """A replay's record (None when its worker could not finish it, with the reason)."""

    replay_id: int
    record: dict[str, Any] | None
    error: str | None = None


RunEvent = Finished | Ended | ReplayDone


class EventSink(Protocol):
    def put(self, event: RunEvent) -> None:
        """Take one event; called from Dask's threads, so it must not block for long."""
