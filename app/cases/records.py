"""A case attempt's runs, and its reveal: scored and revealed in the transaction that ends its
fix run, whichever process ends it (the worker storing its record, the web process's writer, the
housekeeping), so that reading a case page never writes."""

from __future__ import annotations

from sqlmodel import Session, col, select

from app.cases.models import CaseAttempt, CaseRun, CaseRunKind, CaseStage
from app.core.row_locks import lock_row
from app.exercises.models import ExerciseRun
from app.models.time import utcnow
from app.runs.models import Attempt
from drills.cases.registry import UnknownCase, get_case
from drills.cases.scoring import Diagnosis, score_case


def runs_of(session: Session, case_attempt_id: int) -> list[tuple[CaseRun, Attempt]]:
    rows = session.exec(
        select(CaseRun, Attempt)
        .join(Attempt, col(Attempt.id) == col(CaseRun.attempt_id))
        .where(CaseRun.case_attempt_id == case_attempt_id)
        .order_by(col(CaseRun.id))
    ).all()
    return [(run, attempt) for run, attempt in rows]


def experiments_run(session: Session, case_attempt_id: int) -> list[str]:
    return [
        run.experiment_key
        for run, _ in runs_of(session, case_attempt_id)
        if run.kind == CaseRunKind.experiment and run.experiment_key
    ]


def stored_diagnosis(case_attempt: CaseAttempt) -> Diagnosis | None:
    data = case_attempt.diagnosis
    if not data:
        return None
    return Diagnosis(
        data["leading"],
        tuple(data.get("alternatives", [])),
        data["first_test"],
        data["intervention"],
        data["confirmation"],
    )


def reveal_after_run(session: Session, attempt: Attempt) -> CaseAttempt | None:
    """Called with an attempt just ended (not yet committed): if it is the fix run of a case
    attempt, score that attempt and reveal it, in the same transaction, and return it (what
    else a reveal sets off is the caller's: app/features.py). The fix counts only if it is the
    case's intended fix, its run ended well and the drill reads it as healthy."""
    if attempt.case_attempt_id is None or attempt.id is None:
        return None
    run = session.exec(select(CaseRun).where(CaseRun.attempt_id == attempt.id)).first()
    if run is None or run.kind != CaseRunKind.fix:
        return None
    case_attempt = lock_row(session, CaseAttempt, attempt.case_attempt_id)
    if case_attempt is None or case_attempt.stage != CaseStage.fixing:
        return None
    diagnosis = stored_diagnosis(case_attempt)
    try:
        case = get_case(case_attempt.case_key)
    except UnknownCase:  # retired while its fix ran: reveal without a score
        case = None
    if case is not None and diagnosis is not None and case_attempt.named_cause is not None:
        if attempt.exercise_slug is not None:
            # A code verdict: the exercise's judge decides (its hook stored the judgement just
            # before this one ran); a run that crashed or timed out was never judged.
            judged = session.exec(
                select(ExerciseRun.judgement).where(ExerciseRun.attempt_id == attempt.id)
            ).first()
            healed = attempt.status == "succeeded" and judged == "passed"
        else:
            healed = attempt.status == "succeeded" and case.case_set.healed(
                attempt.signature or {}, attempt.error
            )
        score = score_case(
            case,
            case_attempt.cause,
            diagnosis,
            experiments_run(session, case_attempt.id or 0),
            case_attempt.named_cause,
            healed,
            case_attempt.budget,
            fix_key=case_attempt.fix_key or "",
            exercise=attempt.exercise_slug,
        )
        case_attempt.score = score.as_dict()
    case_attempt.revealed_at = utcnow()
    case_attempt.stage = CaseStage.revealed
    session.add(case_attempt)
    return case_attempt
