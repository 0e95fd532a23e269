"""A run's life in one place: how it is made, how it ends, and what other features do when it
ends.

Every run is made by `new_run`, whichever feature asks for it (a drill page's run, a case's
experiment or fix, a round, an exercise's code): its learner's queue turn is taken (a refusal
past their cap), the scheduler it goes to is chosen or it is held for their share, and its replay
command is written. The feature adds what links the run to it, commits and calls `dispatch`.

Four places end runs: a worker storing its own record (app/runner/progress_store.py), the web
process's writer for what it hears of its runs (evidence_writer.py), the housekeeping ending the
runs nobody else will (housekeeping.py), and a learner cancelling one in the queue (attempts.py).
Each locks the run's row, and, unless it has ended already, calls `end_run` in its transaction.

`end_run` stores the ending, then calls every feature's hook in that same transaction: a case
scores and reveals the attempt its fix run belongs to, spaced review turns a missed prediction
into a review item, an exercise keeps its judgement. Runs know nothing of those features: each
registers its hook (app/features.py installs them in every process that ends runs), so a
feature's reaction is never lost, whichever process ends the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from app.runs import evidence
from app.runs.attempt_changes import Change, announce
from app.runs.fair_share import sent_to, take_turn
from app.runs.models import Attempt, AttemptStatus
from drills.core.command import replay_command

if TYPE_CHECKING:  # for the annotations only
    from app.runner.dispatcher import AttemptRunner
    from drills.core.contract import Drill

# Called with the run just ended (not yet committed) and the worker's record, or None when the
# run ended without one (a lost worker, a timeout, a cancel in the queue).
RunEndHook = Callable[[Session, Attempt, Mapping[str, Any] | None], None]

_hooks: dict[str, RunEndHook] = {}


def new_run(
    session: Session,
    runner: AttemptRunner,
    *,
    learner_id: int,
    drill: Drill,
    knobs: Mapping[str, Any],
    seed: int,
    turn: int | None = None,
    command: str | None = None,
    **belongs_to: Any,
) -> Attempt:
    """The one way a run is made: added to the session, not yet committed or sent.

    `turn` is the learner's queue turn when the caller took it already (under a lock of its
    own); otherwise it is taken here, raising TooManyRuns past the learner's cap. `command` is
    the replay command (a drill run's by default). `belongs_to` are the fields that tie the run
    to what asked for it (a prediction, a case attempt, a round, an exercise)."""
    if turn is None:
        turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    fields: dict[str, Any] = {"hypothesis": "", "prediction_text": ""} | belongs_to
    attempt = Attempt(
        learner_id=learner_id,
        drill_slug=drill.slug,
        drill_version=drill.version,
        knobs=dict(knobs),
        seed=seed,
        command=command or replay_command(drill.slug, dict(knobs), seed),
        scheduler_id=sent_to(session, runner, learner_id=learner_id, turn=turn),
        queue_turn=turn,
        **fields,
    )
    session.add(attempt)
    return attempt


def when_a_run_ends(name: str, hook: RunEndHook) -> None:
    """Register `hook` under `name` (registering a name again replaces its hook: installing the
    features twice in one process leaves each hook once). Hooks run in registration order."""
    _hooks[name] = hook


def hook_names() -> list[str]:
    return list(_hooks)


def lock_unended(session: Session, attempt_id: int) -> Attempt | None:
    """The run's row, locked for the rest of the transaction; None if it is gone or has ended."""
    attempt = evidence.lock_attempt(session, attempt_id)
    return None if attempt is None or attempt.final else attempt


def end_run(
    session: Session,
    attempt: Attempt,
    *,
    record: Mapping[str, Any] | None = None,
    status: AttemptStatus | None = None,
    error: str = "",
) -> None:
    """The one way a run ends: from the worker's `record`, or with `status` and its reason
    `error`; then every feature's hook and the change announced to every web process, all in
    the caller's transaction (the caller commits). `attempt` comes from `lock_unended`."""
    assert attempt.id is not None and not attempt.final
    if record is not None:
        evidence.finish_from_record(session, attempt=attempt, record=dict(record))
    else:
        assert status is not None and status.is_final, status
        evidence.end_without_record(session, attempt=attempt, status=status, error=error)
    for hook in _hooks.values():
        hook(session, attempt, record)
    announce(session, Change(attempt.id, 0))
