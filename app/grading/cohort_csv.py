"""A cohort's progress as one spreadsheet: a row per learner, a column per drill, case and code
exercise. It reads the results the cohort page has already gathered, so the two never disagree."""

import csv
import io
from collections.abc import Mapping
from typing import Any

from app.accounts.models import User
from drills.core.registry import all_drills

NOT_STARTED = "not started"


def cohort_csv(
    learners: list[User],
    *,
    grid: Mapping[int, Mapping[str, str]],
    case_results: Mapping[str, Any],
    exercise_results: Mapping[str, Any],
) -> str:
    """`grid` is progress_grid's, `case_results` cohort_case_results' and `exercise_results`
    cohort_exercises'. Drill columns keep their bare slugs (the export's first form, which
    spreadsheets already read); case and exercise columns say what they are, since a case key
    and a drill slug may look alike."""
    slugs = [drill.slug for drill in all_drills()]
    cases = [case.key for case in case_results["cases"]]
    exercises = [exercise.slug for exercise in exercise_results["exercises"]]
    out = io.StringIO()
    writer = csv.writer(out)
    header = [
        "username",
        "display_name",
        *slugs,
        *(f"case:{key}" for key in cases),
        *(f"exercise:{slug}" for slug in exercises),
        "solution shown",
    ]
    writer.writerow([inert(cell) for cell in header])
    for learner in learners:
        assert learner.id is not None
        row = [
            learner.username,
            learner.display_name,
            *(grid[learner.id][slug] for slug in slugs),
            *(case_status(case_results["cells"].get((learner.id, key))) for key in cases),
            *(
                exercise_status(exercise_results["cells"].get((learner.id, slug)))
                for slug in exercises
            ),
            # The exercises whose reference solution the learner was shown (their passes of
            # those score low: they typed a fix they had read).
            " ".join(exercise_results.get("solutions_shown", {}).get(learner.id, [])),
        ]
        writer.writerow([inert(cell) for cell in row])
    return out.getvalue()


def case_status(cell: Mapping[str, Any] | None) -> str:
    """As the page's case grid words it: "open", "missed", or "solved 3/4" once scored."""
    if cell is None:
        return NOT_STARTED
    points = cell.get("points")
    return cell["state"] if points is None else f"{cell['state']} {points}/4"


def exercise_status(cell: Mapping[str, Any] | None) -> str:
    """As the page's exercise grid words it: the passing run's judgement, else the latest's
    ("passed", "failed", "error", "not attempted"), or "not judged" while it runs."""
    if cell is None:
        return NOT_STARTED
    return str(cell.get("judgement") or "not judged").replace("-", " ")


def inert(cell: str) -> str:
    """A leading = + - @ (or a tab or carriage return) would make a spreadsheet evaluate the
    cell as a formula: a quote in front keeps it text. Every cell goes through here, not only
    the ones a learner typed, so a new column cannot forget it."""
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell
