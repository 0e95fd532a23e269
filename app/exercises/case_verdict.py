"""A case answered in code: the learner names the cause and submits the exercise's loop, fixed,
instead of a fix from the list (issue 28).

The exercises feature owns this step: it reads and writes the cases' tables (app.cases.models)
but calls none of their code. The submission is an ordinary exercise run (validated, queued
under the learner's fair share, judged in the sandbox, kept as an ExerciseRun) stored in one
transaction with the verdict and the case's fix-run link, under a row lock on the case attempt:
two presses make one verdict. The case is scored and revealed when that run ends, however it
ends (app/cases/records.py), so a crash or a timeout leaves it answered, not stuck.
"""

from __future__ import annotations

from sqlmodel import Session

from app.cases.models import CaseAttempt, CaseRun, CaseRunKind, CaseStage
from app.core.row_locks import lock_row
from app.core.whole_numbers import whole_number
from app.exercises.service import InvalidCode, send_run, store_run, validated_code
from app.models.time import utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs.fair_share import TooManyRuns
from app.runs.models import Attempt
from drills.cases.contract import Case, CaseSet
from drills.exercises.contract import Exercise


class CodeVerdictRefused(ValueError):
    """A code verdict the case's stage does not allow now (409)."""


class InvalidCodeVerdict(ValueError):
    """A field of the form is wrong (422): `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def named_cause(case_set: CaseSet, value: object) -> str:
    """The cause key behind a form value. The case page offers causes by position ("cause-2"),
    never by key (app/diagnosis/shown.py cause_options): the same positions are read back here."""
    text = value if isinstance(value, str) else ""
    index = whole_number(text.removeprefix("cause-"), maximum=len(case_set.causes))
    if not text.startswith("cause-") or not index:
        raise InvalidCodeVerdict("cause", "name the cause from the list")
    return case_set.causes[index - 1].key


def submit_code_verdict(
    session: Session,
    runner: AttemptRunner,
    *,
    case_attempt: CaseAttempt,
    case: Case,
    exercise: Exercise,
    cause_value: object,
    code: object,
) -> Attempt:
    """Store the verdict with its exercise run and send the run. Everything is checked before
    anything is stored: a bad field raises InvalidCodeVerdict, a stage that has moved on
    CodeVerdictRefused, a learner at their cap TooManyRuns."""
    if exercise.slug not in case.exercises():
        raise InvalidCodeVerdict("exercise", "this case offers no such exercise")
    cause = named_cause(case.case_set, cause_value)
    try:
        text = validated_code(code)
    except InvalidCode as error:
        raise InvalidCodeVerdict("code", str(error)) from None
    assert case_attempt.id is not None
    locked = lock_row(session, CaseAttempt, case_attempt.id)
    assert locked is not None
    if locked.stage == CaseStage.diagnosing:
        session.rollback()
        raise CodeVerdictRefused("record your diagnosis first")
    if locked.stage != CaseStage.investigating:
        session.rollback()
        raise CodeVerdictRefused("the verdict for this attempt is already in")
    locked.named_cause = cause
    locked.fix_key = None  # the code is the fix: its run's ExerciseRun holds it
    locked.verdict_at = utcnow()
    locked.stage = CaseStage.fixing
    session.add(locked)
    try:
        attempt = store_run(
            session,
            runner,
            exercise=exercise,
            learner_id=locked.learner_id,
            code=text,
            case_attempt_id=case_attempt.id,
        )
    except TooManyRuns:
        session.rollback()  # nothing half-stored: the verdict waits for a free turn
        raise
    assert attempt.id is not None
    session.add(
        CaseRun(case_attempt_id=case_attempt.id, attempt_id=attempt.id, kind=CaseRunKind.fix)
    )
    session.commit()
    return send_run(session, runner, attempt, exercise=exercise, code=text)
