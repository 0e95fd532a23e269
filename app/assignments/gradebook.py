"""A cohort's gradebook as one spreadsheet: a row per learner; a column per score an instructor
gave on the rubric (drill submissions, cases, curve rounds), per case's automatic points, per
curve round's points, per code exercise's result, and per assignment (done, late, missing, or
not due yet).

Only columns that hold something for at least one learner of the cohort are written (the
catalogue has hundreds of possible score columns), except the assignments, which always are.
A learner's curve rounds are drawn for them alone, so round columns go by the learner's own
order: "round 1" is each learner's first answered round. Every cell goes through
app/grading/cohort_csv.py's `inert`, so no cell is read as a formula.
"""

import csv
import io
from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.assignments.standing import GRADEBOOK_WORDS
from app.assignments.views import Board
from app.cases.models import CASE_RUBRIC, CaseReview
from app.cases.results import cohort_case_results
from app.exercises.cohort import cohort_exercises
from app.grading.cohort_csv import exercise_status, inert
from app.grading.models import RUBRIC, Review, Submission
from app.practice.round_models import DiagnosisRound, RoundReview
from drills.core.registry import all_drills

Row = dict[str, str]


def _number(value: Any) -> str:
    return "" if value is None else str(int(value))


def _drill_reviews(session: Session, ids: list[int], rows: dict[int, Row]) -> None:
    """The newest review of each learner's newest reviewed version of each drill."""
    for submission, review in session.exec(
        select(Submission, Review)
        .join(Review, col(Review.submission_id) == col(Submission.id))
        .where(col(Submission.learner_id).in_(ids))
        .order_by(col(Submission.version), col(Review.id))
    ):
        row = rows[submission.learner_id]
        for criterion, _label in RUBRIC:
            scored = review.scores.get(criterion)
            row[f"drill {submission.drill_slug}: review {criterion}"] = _number(
                scored and scored.get("score")
            )
        row[f"drill {submission.drill_slug}: review decision"] = review.decision


def _cases(session: Session, learners: list[User], rows: dict[int, Row]) -> None:
    """Each case's latest attempt, as the case grid shows it, with its review if it has one."""
    cells = cohort_case_results(session, learners)["cells"]
    reviews = {
        review.case_attempt_id: review
        for review in session.exec(
            select(CaseReview).where(
                col(CaseReview.case_attempt_id).in_([cell["id"] for cell in cells.values()])
            )
        )
    }
    for (learner_id, key), cell in cells.items():
        row = rows[learner_id]
        row[f"case {key}: state"] = cell["state"]
        row[f"case {key}: points of 4"] = _number(cell["points"])
        review = reviews.get(cell["id"])
        if review is not None:
            for criterion, _label in CASE_RUBRIC:
                scored = review.scores.get(criterion)
                row[f"case {key}: review {criterion}"] = _number(scored and scored.get("score"))


def _rounds(session: Session, ids: list[int], rows: dict[int, Row]) -> None:
    answered = session.exec(
        select(DiagnosisRound, RoundReview)
        .join(RoundReview, col(RoundReview.round_id) == col(DiagnosisRound.id), isouter=True)
        .where(
            col(DiagnosisRound.learner_id).in_(ids), col(DiagnosisRound.answered_at).is_not(None)
        )
        .order_by(col(DiagnosisRound.answered_at), col(DiagnosisRound.id))
    ).all()
    count: dict[int, int] = {}
    for diagnosis_round, review in answered:
        number = count[diagnosis_round.learner_id] = count.get(diagnosis_round.learner_id, 0) + 1
        row = rows[diagnosis_round.learner_id]
        row[f"round {number}: drill"] = diagnosis_round.drill_slug
        row[f"round {number}: points of 2"] = _number((diagnosis_round.score or {}).get("points"))
        if review is not None:
            for criterion, _label in CASE_RUBRIC:
                scored = review.scores.get(criterion)
                row[f"round {number}: review {criterion}"] = _number(scored and scored.get("score"))


def _exercises(session: Session, ids: list[int], rows: dict[int, Row]) -> None:
    results = cohort_exercises(session, ids)
    for (learner_id, slug), cell in results["cells"].items():
        rows[learner_id][f"exercise {slug}: result"] = exercise_status(cell)
        shown = slug in results["solutions_shown"].get(learner_id, [])
        rows[learner_id][f"exercise {slug}: solution shown"] = "yes" if shown else "no"


def _column_order(columns: Iterable[str]) -> list[str]:
    """Drills in catalogue order, then cases, rounds (by number) and exercises, each group's
    columns in the order they were first written."""
    drills = {drill.slug: index for index, drill in enumerate(all_drills())}

    def key(name: str) -> tuple[int, int, str]:
        kind, _space, rest = name.partition(" ")
        subject = rest.partition(":")[0]
        if kind == "drill":
            return (0, drills.get(subject, len(drills)), "")
        if kind == "round":
            return (2, int(subject), "")
        return ({"case": 1, "exercise": 3}.get(kind, 4), 0, subject)

    return sorted(dict.fromkeys(columns), key=key)


def gradebook_csv(session: Session, *, learners: list[User], board: Board) -> str:
    ids = [learner.saved_id for learner in learners]
    rows: dict[int, Row] = {learner_id: {} for learner_id in ids}
    if ids:
        _drill_reviews(session, ids, rows)
        _cases(session, learners, rows)
        _rounds(session, ids, rows)
        _exercises(session, ids, rows)
    scores = _column_order(name for row in rows.values() for name in row)
    assignments = [
        (
            assignment.id or 0,
            f"assignment: {assignment.title} (due {assignment.due_at:%Y-%m-%d %H:%M} UTC)",
        )
        for assignment in board.assignments
    ]
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["username", "display_name", *scores, *(name for _id, name in assignments)]
    writer.writerow([inert(cell) for cell in header])
    for learner in learners:
        row = rows[learner.saved_id]
        cells = [
            learner.username,
            learner.display_name,
            *(row.get(name, "") for name in scores),
            *(
                GRADEBOOK_WORDS[board.standings[(learner.saved_id, assignment_id)].state]
                for assignment_id, _name in assignments
            ),
        ]
        writer.writerow([inert(cell) for cell in cells])
    return out.getvalue()
