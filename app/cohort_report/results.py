"""What the cohort page and its CSV show, gathered from every feature in one place."""

from datetime import datetime
from typing import Any

from sqlmodel import Session

from app.accounts.models import Cohort
from app.assignments.views import cohort_board
from app.assignments.when import in_words
from app.cases.results import cohort_case_results
from app.exercises.cohort import cohort_exercises
from app.grading.progress import cohort_learners, progress_grid, work_links
from app.practice import items as review_items
from app.practice.results import cohort_practice
from drills.core.catalogue import describe
from drills.core.registry import all_drills


def cohort_results(session: Session, cohort: Cohort) -> dict[str, Any]:
    """Each learner's standing on every drill, case and exercise: the page's grids and the CSV's
    columns, gathered in one place so the two cannot drift apart."""
    learners = cohort_learners(session, cohort=cohort)
    ids = [u.id for u in learners if u.id is not None]
    return {
        "learners": learners,
        "grid": progress_grid(session, learner_ids=ids),
        "case_results": cohort_case_results(session, learners),
        "exercise_results": cohort_exercises(session, ids),
    }


def cohort_context(
    session: Session, cohort: Cohort, budget_error: str | None = None, *, now: datetime
) -> dict[str, Any]:
    """Everything templates/pages/cohort.html reads."""
    results = cohort_results(session, cohort)
    learners = results["learners"]
    ids = [u.id for u in learners if u.id is not None]
    return results | {
        "cohort": cohort,
        # The compact summary in front of the grids (templates/partials/cohort_summary.html).
        "board": cohort_board(session, cohort=cohort, learners=learners, now=now),
        "due_words": lambda moment: in_words(moment, now=now),
        "links": work_links(session, learner_ids=ids),
        "drills": [describe(d) for d in all_drills()],
        "practice": cohort_practice(session, learners, now=now),
        "review_items": review_items.cohort_items(session, cohort_id=cohort.id or 0),
        "item_form": {},
        "errors": {"case_budget": budget_error} if budget_error else {},
    }
