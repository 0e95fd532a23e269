"""What a case attempt's or round's page shows of its revisions (templates/partials/revisions.html):
each revision in words with its review, the form to revise for its learner while changes are
asked for, and the review form for its instructor while a revision waits."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.accounts.models import User
from app.diagnosis.shown import option_of
from app.grading.revisions.models import DiagnosisRevision
from app.grading.revisions.service import Subject, thread_of
from drills.cases.contract import CaseSet


def diagnosis_parts(case_set: CaseSet, diagnosis: dict[str, Any]) -> list[tuple[str, str]]:
    """The five parts of a stored diagnosis as (label, words)."""
    causes = {cause.key: cause.text for cause in case_set.causes}
    tests = {experiment.key: experiment.title for experiment in case_set.experiments}
    alternatives = [causes.get(key, key) for key in diagnosis.get("alternatives", [])]
    return [
        ("Leading hypothesis", causes.get(diagnosis.get("leading", ""), "")),
        ("Alternatives", "; ".join(alternatives) or "none"),
        ("First test", tests.get(diagnosis.get("first_test", ""), "")),
        ("Expected fix", diagnosis.get("intervention", "")),
        ("Evidence the fix worked", diagnosis.get("confirmation", "")),
    ]


def _entry(session: Session, case_set: CaseSet, revision: DiagnosisRevision) -> dict[str, Any]:
    reviewer = session.get(User, revision.reviewer_id) if revision.reviewer_id else None
    return {
        "revision": revision,
        "parts": diagnosis_parts(case_set, revision.diagnosis),
        "reviewer": reviewer.display_name if reviewer else None,
    }


def revision_context(
    session: Session, subject: Subject, *, owner: bool, can_review: bool
) -> dict[str, Any]:
    thread = thread_of(session, subject)
    case_set = subject.case_set
    # The form starts from the words of the latest diagnosis, so a revision is an edit of it.
    latest: dict[str, Any] = thread.latest.diagnosis if thread.latest else subject.first_diagnosis
    return {
        "thread": thread,
        "first_parts": diagnosis_parts(case_set, subject.first_diagnosis),
        "revisions": [_entry(session, case_set, revision) for revision in thread.revisions],
        "can_revise": owner and thread.open_to_revise,
        "review_revision": can_review and thread.pending is not None,
        "revise_defaults": {
            "alternatives": [option_of(case_set, key) for key in latest.get("alternatives", [])],
            "first_test": latest.get("first_test", ""),
            "intervention": latest.get("intervention", ""),
            "confirmation": latest.get("confirmation", ""),
        },
    }
