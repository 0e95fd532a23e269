"""Revisions waiting for review, as the review queue lists them: those of the learners this
reviewer may review, oldest first, each with its page and its title in words."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.accounts.models import Role, User
from app.cases.models import CaseAttempt
from app.grading.revisions.models import DiagnosisRevision
from app.practice.round_models import DiagnosisRound
from app.web.access import learners_of


@dataclass(frozen=True)
class WaitingRevision:
    revision: DiagnosisRevision
    learner: User
    href: str  # the page of the case attempt or round, at its revisions
    what: str  # "case a-fresh-head, attempt 1" or "curve round 2026-12-03 #1"


def waiting_revisions(session: Session, *, reviewer: User) -> list[WaitingRevision]:
    query = (
        select(DiagnosisRevision, User, CaseAttempt, DiagnosisRound)
        .join(User, col(User.id) == col(DiagnosisRevision.learner_id))
        .outerjoin(CaseAttempt, col(CaseAttempt.id) == col(DiagnosisRevision.case_attempt_id))
        .outerjoin(DiagnosisRound, col(DiagnosisRound.id) == col(DiagnosisRevision.round_id))
        .where(col(DiagnosisRevision.decision).is_(None))
    )
    if reviewer.role != Role.admin:
        query = query.where(col(DiagnosisRevision.learner_id).in_(learners_of(session, reviewer)))
    rows = session.exec(
        query.order_by(col(DiagnosisRevision.created_at), col(DiagnosisRevision.id))
    ).all()
    waiting = []
    for revision, learner, case_attempt, diagnosis_round in rows:
        if case_attempt is not None:
            href = f"/cases/attempts/{case_attempt.id}#revisions"
            what = f"case {case_attempt.case_key}, attempt {case_attempt.number}"
        else:
            assert diagnosis_round is not None
            href = f"/practice/rounds/{diagnosis_round.id}#revisions"
            what = f"curve round of {diagnosis_round.day}, number {diagnosis_round.number}"
        waiting.append(WaitingRevision(revision, learner, href, what))
    return waiting
