"""Revise and resubmit, in the browser: a learner sends a revised diagnosis of their reviewed case
attempt or round; its instructor reviews the latest revision. Each answers with the page it was
sent from: on success a redirect to its revisions, on a refusal or a bad field the page again with
the reason (409 or 422)."""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session
from starlette.datastructures import FormData

from app.accounts.models import User
from app.cases.models import CaseAttempt, CaseStage
from app.diagnosis import shown
from app.diagnosis.form import InvalidCaseInput
from app.grading.revisions import service
from app.grading.revisions.service import MAX_REVISIONS, Subject
from app.grading.rubric import InvalidReview
from app.practice.round_models import DiagnosisRound
from app.web import pages
from app.web.access import can_review_work_of
from app.web.deps import (
    CaseAttemptDep,
    InstructorDep,
    OwnCaseAttemptDep,
    OwnRoundDep,
    RoundDep,
    SessionDep,
)
from app.web.forms import FormDataDep, FormDep

router = APIRouter(tags=["revisions"], include_in_schema=False)

RevisionNumber = Annotated[int, Path(ge=1, le=MAX_REVISIONS, description="A revision's number")]
# Renders the page of what was revised, with errors, a refusal or the form as sent.
PageOf = Callable[..., HTMLResponse]


def _fields(subject: Subject, form: FormData) -> dict[str, Any]:
    """The revise form as the service reads it: option values ("cause-N") turned into causes."""
    texts = {key: value for key, value in form.items() if isinstance(value, str)}
    alternatives = [value for value in form.getlist("alternatives") if isinstance(value, str)]
    return texts | {
        "alternatives": [shown.cause_key(subject.case_set, value) or "?" for value in alternatives]
    }


def _echo(form: FormData) -> dict[str, Any]:
    echo: dict[str, Any] = {key: value for key, value in form.items() if isinstance(value, str)}
    echo["alternatives"] = [
        value for value in form.getlist("alternatives") if isinstance(value, str)
    ]
    return echo


def _revise(
    session: Session, subject: Subject, form: FormData, page: PageOf, href: str
) -> Response:
    thread = service.thread_of(session, subject)
    try:
        service.submit_revision(session, thread, _fields(subject, form))
    except (InvalidCaseInput, service.RevisionRefused) as error:
        session.rollback()
        refused = isinstance(error, service.RevisionRefused)
        return page(
            errors={} if refused else error.errors,  # type: ignore[union-attr]
            refusal=str(error) if refused else None,
            form=_echo(form),
            status_code=409 if refused else 422,
        )
    return RedirectResponse(f"{href}#revisions", status_code=303)


def _review(
    session: Session,
    subject: Subject,
    number: int,
    user: User,
    fields: dict[str, str],
    page: PageOf,
    href: str,
) -> Response:
    if not can_review_work_of(session, user, subject.learner_id):
        raise HTTPException(
            status_code=403, detail="Only the learner's instructor can review this."
        )
    thread = service.thread_of(session, subject)
    try:
        service.review_revision(session, thread, number=number, reviewer=user, fields=fields)
    except LookupError:
        raise HTTPException(status_code=404, detail=f"No revision {number} here.") from None
    except InvalidReview as error:
        status = 409 if isinstance(error, service.RevisionReviewConflict) else 422
        return page(errors=error.errors, form=dict(fields), status_code=status)
    return RedirectResponse(f"{href}#next-in-queue", status_code=303)


def _case_subject(session: Session, case_attempt: CaseAttempt) -> Subject:
    if case_attempt.stage != CaseStage.revealed:
        raise HTTPException(
            status_code=409,
            detail="A case is revised only once its truth is revealed and reviewed.",
        )
    return service.case_subject(session, case_attempt)


def _round_subject(session: Session, diagnosis_round: DiagnosisRound) -> Subject:
    if diagnosis_round.answered_at is None:
        raise HTTPException(
            status_code=409, detail="A round is revised only once it is answered and reviewed."
        )
    return service.round_subject(session, diagnosis_round)


def _case_page(request: Request, session: Session, case_attempt: CaseAttempt) -> PageOf:
    def page(**kwargs: Any) -> HTMLResponse:
        fresh = session.get(CaseAttempt, case_attempt.id, populate_existing=True)
        assert fresh is not None
        return pages.render("case", request, session, fresh, **kwargs)

    return page


def _round_page(request: Request, session: Session, diagnosis_round: DiagnosisRound) -> PageOf:
    def page(**kwargs: Any) -> HTMLResponse:
        fresh = session.get(DiagnosisRound, diagnosis_round.id, populate_existing=True)
        assert fresh is not None
        return pages.render("round", request, session, fresh, **kwargs)

    return page


@router.post("/cases/attempts/{case_attempt_id}/revisions", response_model=None)
def revise_case(
    request: Request, case_attempt: OwnCaseAttemptDep, session: SessionDep, form: FormDataDep
) -> Response:
    subject = _case_subject(session, case_attempt)
    page = _case_page(request, session, case_attempt)
    return _revise(session, subject, form, page, f"/cases/attempts/{case_attempt.id}")


@router.post("/cases/attempts/{case_attempt_id}/revisions/{number}/review", response_model=None)
def review_case_revision(
    request: Request,
    case_attempt: CaseAttemptDep,
    number: RevisionNumber,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
) -> Response:
    subject = _case_subject(session, case_attempt)
    page = _case_page(request, session, case_attempt)
    href = f"/cases/attempts/{case_attempt.id}"
    return _review(session, subject, number, user, fields, page, href)


@router.post("/practice/rounds/{round_id}/revisions", response_model=None)
def revise_round(
    request: Request, diagnosis_round: OwnRoundDep, session: SessionDep, form: FormDataDep
) -> Response:
    subject = _round_subject(session, diagnosis_round)
    page = _round_page(request, session, diagnosis_round)
    return _revise(session, subject, form, page, f"/practice/rounds/{diagnosis_round.id}")


@router.post("/practice/rounds/{round_id}/revisions/{number}/review", response_model=None)
def review_round_revision(
    request: Request,
    diagnosis_round: RoundDep,
    number: RevisionNumber,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
) -> Response:
    subject = _round_subject(session, diagnosis_round)
    page = _round_page(request, session, diagnosis_round)
    href = f"/practice/rounds/{diagnosis_round.id}"
    return _review(session, subject, number, user, fields, page, href)
