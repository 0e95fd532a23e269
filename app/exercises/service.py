"""Starting an exercise's run, the help a learner takes, and keeping the judge's verdict.

A run is validated first (a bad request stores nothing), stored as an Attempt with its
ExerciseRun row in one transaction (under the learner's fair share, app/runs/fair_share.py), then
sent to a worker. The worker judges the code in a sandbox and its record carries the judgement,
which app/exercises/judgements.py writes in the same transaction that ends the attempt.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from app.core.limits import MAX_SEED
from app.core.row_locks import lock_row
from app.exercises.models import MAX_CODE, ExerciseHelp, ExerciseHelpStep, ExerciseRun
from app.models.time import utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs import lifecycle
from app.runs.attempts import not_dispatched
from app.runs.fair_share import priority_of, take_turn
from app.runs.models import Attempt
from drills.core.registry import get_drill
from drills.exercises.contract import Exercise
from drills.exercises.record import exercise_command
from drills.exercises.starter_diff import diff_from_starter

# What a stored exercise run answers in the fields an attempt has for a prediction: it made none.
NO_HYPOTHESIS = "exercise"
# The help ladder's last rung, as ExerciseHelpStep.step names it (hints are "hint-<n>").
SOLUTION_STEP = "solution"


class InvalidCode(ValueError):
    """The submitted code cannot be run: missing, not text, or too long."""


class NotEarned(PermissionError):
    """The reference solution was asked for before it was earned."""


def validated_code(raw: object) -> str:
    """The file as text with Unix line ends (a browser posts a textarea's with CRLF)."""
    if not isinstance(raw, str):
        raise InvalidCode("code must be the text of the file")
    raw = raw.replace("\r\n", "\n")
    if not raw.strip():
        raise InvalidCode("the code is empty: start from the exercise's starter file")
    if len(raw) > MAX_CODE:
        raise InvalidCode(f"the code is longer than {MAX_CODE:,} characters")
    if "\x00" in raw:
        raise InvalidCode("the code contains a NUL character")
    return raw


def help_of(session: Session, *, learner_id: int, exercise: Exercise) -> ExerciseHelp:
    """The learner's help on the exercise (an unsaved empty one if they took none)."""
    found = session.exec(
        select(ExerciseHelp).where(
            ExerciseHelp.learner_id == learner_id, ExerciseHelp.exercise_slug == exercise.slug
        )
    ).first()
    return found or ExerciseHelp(learner_id=learner_id, exercise_slug=exercise.slug)


def start_run(
    session: Session, runner: AttemptRunner, *, exercise: Exercise, learner_id: int, code: object
) -> Attempt:
    """Store and send one run of the learner's code; raise InvalidCode or TooManyRuns first."""
    text = validated_code(code)
    attempt = store_run(session, runner, exercise=exercise, learner_id=learner_id, code=text)
    session.commit()
    return send_run(session, runner, attempt, exercise=exercise, code=text)


def store_run(
    session: Session,
    runner: AttemptRunner,
    *,
    exercise: Exercise,
    learner_id: int,
    code: str,
    **belongs_to: int,
) -> Attempt:
    """Add a run of validated `code` and its ExerciseRun row to the session, uncommitted (the
    caller commits it with whatever else the run belongs to: a case attempt's verdict)."""
    drill = get_drill(exercise.drill)
    turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    # The server draws the seed: the hidden seeds the judge trains on derive from it.
    seed = secrets.randbelow(MAX_SEED + 1)
    help_taken = help_of(session, learner_id=learner_id, exercise=exercise)
    attempt = lifecycle.new_run(
        session,
        runner,
        learner_id=learner_id,
        drill=drill,
        knobs={},
        seed=seed,
        turn=turn,
        command=exercise_command(exercise.slug, seed),
        hypothesis=NO_HYPOTHESIS,
        exercise_slug=exercise.slug,
        **belongs_to,
    )
    session.flush()
    assert attempt.id is not None
    session.add(
        ExerciseRun(
            attempt_id=attempt.id,
            exercise_slug=exercise.slug,
            code=code,
            code_sha256=hashlib.sha256(code.encode()).hexdigest(),
            diff=diff_from_starter(exercise, code),
            hints_taken=help_taken.hints_taken,
            solution_shown=help_taken.solution_shown_at is not None,
        )
    )
    return attempt


def send_run(
    session: Session, runner: AttemptRunner, attempt: Attempt, *, exercise: Exercise, code: str
) -> Attempt:
    """Send a stored (committed) run to a worker, unless it is held back."""
    session.refresh(attempt)
    if attempt.held:
        return attempt  # held back: app/runs/backlog.py sends it when it may go
    assert attempt.id is not None
    try:
        runner.submit_exercise(
            attempt_id=attempt.id,
            exercise=exercise.slug,
            code=code,
            seed=attempt.seed,
            priority=priority_of(attempt.queue_turn),
        )
    except Exception as error:
        not_dispatched(session, attempt, error)  # ends it, so a case answered in code hears
    return attempt


def reveal_hint(
    session: Session, *, learner_id: int, exercise: Exercise, rung: int | None = None
) -> ExerciseHelp:
    """Reveal hints up to `rung` (1-based; the next one when None). Asking for a rung already
    shown changes nothing, so a double press reveals one hint, not two."""
    help_taken = _locked_help(session, learner_id=learner_id, exercise=exercise)
    wanted = help_taken.hints_taken + 1 if rung is None else rung
    wanted = max(0, min(wanted, len(exercise.hints)))
    if wanted > help_taken.hints_taken:
        now = utcnow()
        # Each rung climbed gets its time, even when one press reveals several.
        for number in range(help_taken.hints_taken + 1, wanted + 1):
            _take_step(session, help_taken, f"hint-{number}", now)
        help_taken.hints_taken = wanted
        help_taken.updated_at = now
        session.add(help_taken)
    session.commit()
    session.refresh(help_taken)
    return help_taken


def passed_once(session: Session, *, learner_id: int, exercise: Exercise) -> bool:
    found = session.exec(
        select(ExerciseRun.id)
        .join(Attempt, col(Attempt.id) == ExerciseRun.attempt_id)
        .where(
            Attempt.learner_id == learner_id,
            ExerciseRun.exercise_slug == exercise.slug,
            ExerciseRun.judgement == "passed",
        )
    ).first()
    return found is not None


def solution_earned(session: Session, *, learner_id: int, exercise: Exercise) -> bool:
    """The reference is earned by passing, or by climbing the whole hint ladder first."""
    help_taken = help_of(session, learner_id=learner_id, exercise=exercise)
    return help_taken.hints_taken >= len(exercise.hints) or passed_once(
        session, learner_id=learner_id, exercise=exercise
    )


def reveal_solution(session: Session, *, learner_id: int, exercise: Exercise) -> ExerciseHelp:
    """Show the reference solution, and record when (it lowers the score of later passes)."""
    if not solution_earned(session, learner_id=learner_id, exercise=exercise):
        left = (
            len(exercise.hints)
            - help_of(session, learner_id=learner_id, exercise=exercise).hints_taken
        )
        raise NotEarned(
            f"The solution comes after the {left} remaining hint(s), or once your code passes."
        )
    help_taken = _locked_help(session, learner_id=learner_id, exercise=exercise)
    if help_taken.solution_shown_at is None:
        help_taken.solution_shown_at = help_taken.updated_at = utcnow()
        _take_step(session, help_taken, SOLUTION_STEP, help_taken.solution_shown_at)
        session.add(help_taken)
    session.commit()
    session.refresh(help_taken)
    return help_taken


def _take_step(session: Session, help_taken: ExerciseHelp, step: str, now: datetime) -> None:
    """Record a rung as taken at `now` (under the help row's lock: never twice)."""
    session.add(
        ExerciseHelpStep(
            learner_id=help_taken.learner_id,
            exercise_slug=help_taken.exercise_slug,
            step=step,
            taken_at=now,
        )
    )


def help_steps(session: Session, *, learner_id: int, exercise_slug: str) -> list[ExerciseHelpStep]:
    """The rungs the learner took on the exercise, in the order taken."""
    return list(
        session.exec(
            select(ExerciseHelpStep)
            .where(
                ExerciseHelpStep.learner_id == learner_id,
                ExerciseHelpStep.exercise_slug == exercise_slug,
            )
            .order_by(col(ExerciseHelpStep.taken_at), col(ExerciseHelpStep.id))
        ).all()
    )


def _locked_help(session: Session, *, learner_id: int, exercise: Exercise) -> ExerciseHelp:
    """The learner's help row, created if needed, locked to the end of the transaction: two
    presses at once serialise on it (the learner's row lock makes the creation race-free)."""
    from app.accounts.models import User

    lock_row(session, User, learner_id)
    help_taken = help_of(session, learner_id=learner_id, exercise=exercise)
    if help_taken.id is None:
        session.add(help_taken)
        session.flush()
    return help_taken


def runs_of(
    session: Session, *, learner_id: int, exercise: Exercise, limit: int = 20
) -> list[tuple[Attempt, ExerciseRun]]:
    """The learner's runs of the exercise, newest first."""
    rows = session.exec(
        select(Attempt, ExerciseRun)
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == Attempt.id)
        .where(Attempt.learner_id == learner_id, Attempt.exercise_slug == exercise.slug)
        .order_by(col(Attempt.id).desc())
        .limit(limit)
    ).all()
    return [(attempt, run) for attempt, run in rows]


@dataclass(frozen=True)
class Score:
    """A passed run's worth: full marks without help, less for each hint, little once the
    solution was shown before it (the learner then typed a fix they had read)."""

    value: float
    why: str


def score_of(run: ExerciseRun) -> Score | None:
    if run.judgement != "passed":
        return None
    if run.solution_shown:
        return Score(0.2, "passed after the solution was shown")
    value = max(0.4, 1.0 - 0.2 * run.hints_taken)
    hints = f"with {run.hints_taken} hint{'s' if run.hints_taken != 1 else ''}"
    return Score(
        round(value, 2), "passed without hints" if not run.hints_taken else f"passed {hints}"
    )
