"""The portfolio as one self-contained HTML page: inline CSS, inline SVG charts, no script and no
URL to fetch, so it opens offline years later exactly as it was exported."""

from functools import partial
from typing import Any

from sqlmodel import Session

from app.exercises.models import ExerciseRun
from app.grading.models import Submission
from app.grading.progress import progress_grid
from app.portfolio.charts import chart_svg
from app.portfolio.practice_html import practice_sections
from app.portfolio.practice_statements import exercise_run_id
from app.portfolio.records import LearnerRecords, Records
from app.portfolio.statements import attempt_id, review_id, submission_id
from app.runs.models import Attempt
from app.runs.views import numeric_rows, observation_rows, reference_lines
from app.web.markdown import render_markdown
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills


def render_portfolio(
    session: Session, *, records: Records, document: dict[str, Any], title: str
) -> str:
    digests = {s["id"]: s["digest"] for s in document["statements"]}
    grid = progress_grid(session, learner_ids=[r.learner.saved_id for r in records.learners])
    drills = [describe(drill) for drill in all_drills()]
    context = {
        "title": title,
        "document": document,
        "people": [
            _learner(records, mine, grid[mine.learner.saved_id], drills, digests)
            for mine in records.learners
        ],
        # Explanations are Markdown; links keep their text but lose their target offline.
        "offline_markdown": partial(render_markdown, links=False),
    }
    return templates.env.get_template("exports/portfolio.html").render(context)


def _learner(
    records: Records,
    mine: LearnerRecords,
    statuses: dict[str, str],
    drills: list[dict[str, Any]],
    digests: dict[str, str],
) -> dict[str, Any]:
    roles: dict[int, list[str]] = {}
    for version in mine.submissions:
        roles.setdefault(version.failed_attempt_id, []).append(f"failed run of v{version.version}")
        roles.setdefault(version.fixed_attempt_id, []).append(f"fixed run of v{version.version}")
    return {
        "learner": mine.learner,
        "drills": [
            {
                "drill": drill,
                "status": statuses.get(drill["slug"], "not started"),
                "attempts": [
                    _attempt(records, attempt, drill, roles, digests)
                    for attempt in mine.attempts
                    if attempt.drill_slug == drill["slug"]
                ],
                "submissions": [
                    _submission(records, version, digests)
                    for version in mine.submissions
                    if version.drill_slug == drill["slug"]
                ],
            }
            for drill in drills
        ],
        "exercise_runs": [
            _exercise_run(attempt, run, digests) for attempt, run in mine.exercise_runs
        ],
        # Cases, curve rounds and spaced reviews: the diagnosing work the statements hold too.
        **practice_sections(mine, digests),
    }


def _exercise_run(attempt: Attempt, run: ExerciseRun, digests: dict[str, str]) -> dict[str, Any]:
    from app.exercises.service import score_of
    from drills.exercises.registry import UnknownExercise, get_exercise

    assert attempt.id is not None
    try:
        title = get_exercise(run.exercise_slug).title
    except UnknownExercise:
        title = run.exercise_slug
    return {
        "attempt": attempt,
        "run": run,
        "title": title,
        "score": score_of(run),
        "statement_digest": digests.get(exercise_run_id(attempt.id)),
    }


def _attempt(
    records: Records,
    attempt: Attempt,
    drill: dict[str, Any],
    roles: dict[int, list[str]],
    digests: dict[str, str],
) -> dict[str, Any]:
    assert attempt.id is not None
    hypotheses = {item["key"]: item["text"] for item in drill["hypotheses"]}
    series = records.series.get(attempt.id, {})
    references = reference_lines(drill, attempt.signature or {})
    return {
        "attempt": attempt,
        "predicted_text": hypotheses.get(attempt.hypothesis, attempt.hypothesis),
        "observed_text": hypotheses.get(attempt.observed_hypothesis or ""),
        "observations": observation_rows(
            drill, attempt.signature or {}, verdict=attempt.observed_hypothesis
        ),
        "numeric": numeric_rows(drill, attempt),
        "parameters": (attempt.diagnostics or {}).get("parameters", []),
        "tables": (attempt.diagnostics or {}).get("tables", []),
        "explanation": records.explanations.get(attempt.id),
        "replays": records.replays.get(attempt.id, []),
        "charts": [
            (chart, chart_svg(chart, series, references.get(chart["key"], [])))
            for chart in drill["charts"]
        ],
        "roles": roles.get(attempt.id, []),
        "statement_id": attempt_id(attempt.id),
        "statement_digest": digests.get(attempt_id(attempt.id)),
    }


def _submission(records: Records, version: Submission, digests: dict[str, str]) -> dict[str, Any]:
    assert version.id is not None
    reviews = []
    for review in records.reviews.get(version.id, []):
        assert review.id is not None
        reviewer = records.person(review.instructor_id)
        reviews.append(
            {
                "review": review,
                "reviewer": reviewer.display_name if reviewer else "(deleted account)",
                "statement_digest": digests.get(review_id(review.id)),
            }
        )
    return {
        "submission": version,
        "reviews": reviews,
        "statement_digest": digests.get(submission_id(version.id)),
    }
