"""Jinja2 set-up shared by the page routes."""

import math
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates

from app.accounts.models import Role
from app.cases.models import CASE_RUBRIC_LEVELS, CaseStage
from app.core import limits
from app.core.config import ROOT
from app.grading.models import RUBRIC_LEVELS, Decision, SubmissionStatus
from app.runs.models import AttemptStatus
from app.runs.replay_models import ReplayStatus, ReplayVerdict
from app.security.csrf import csrf_token
from app.web.markdown import render_markdown
from app.web.request_keys import new_request_key
from app.web.static_assets import static_url


def _page_globals(request: Request) -> dict[str, Any]:
    return {
        "csrf_token": csrf_token(request),
        "current_user": getattr(request.state, "user", None),
        # Allows the <style> elements the code editor writes (app/security/headers.py).
        "style_nonce": getattr(request.state, "style_nonce", ""),
    }


templates = Jinja2Templates(directory=ROOT / "templates", context_processors=[_page_globals])


def number(value: Any, digits: int = 4) -> str:
    """Readable numbers for tables: 4 significant digits, scientific when tiny or huge."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}"


# A run's status in words. "succeeded" said that a run showing its planted bug had succeeded:
# the run finished (it is the evidence that may show a failure), distinct from one that crashed.
RUN_STATUS_WORDS: dict[str, str] = {
    AttemptStatus.succeeded: "finished",
    AttemptStatus.failed: "crashed",
    AttemptStatus.timed_out: "timed out",
    AttemptStatus.resource_limit: "hit a resource limit",
}


def run_status(status: str) -> str:
    """How a page says an attempt's status (the API keeps the status names)."""
    return RUN_STATUS_WORDS.get(status, status.replace("_", " "))


def reading_words(key: str) -> str:
    """An experiment's reading as a page says it: "cut-below-head" reads "cut below head" (the
    key stays in the API and the outcome table)."""
    return key.replace("-", " ")


def table_cell(value: Any) -> str:
    """A diagnostic table cell: yes/no for flags, readable numbers, a dash for nothing."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    return number(value)


def is_measurement(value: Any) -> bool:
    """Right-aligned in tables: numbers, but not flags."""
    return isinstance(value, int | float) and not isinstance(value, bool)


# Form caps: `maxlength="{{ limits.MAX_PREDICTION }}"` (the services check the same numbers).
templates.env.globals["limits"] = limits
# The drill form's one-time token, fresh at each render (templates/partials/request_key.html).
templates.env.globals["new_request_key"] = new_request_key
# Status names: `{% if submission.status == SubmissionStatus.pending %}`, never a bare string.
templates.env.globals.update(
    AttemptStatus=AttemptStatus,
    CaseStage=CaseStage,
    Decision=Decision,
    ReplayStatus=ReplayStatus,
    ReplayVerdict=ReplayVerdict,
    Role=Role,
    SubmissionStatus=SubmissionStatus,
)
# What each 0/1/2 means, by criterion, for both rubrics: `rubric_levels[key][score]` (their
# criteria have distinct keys; tests/app/grading/test_instructor_pages.py holds them to it).
templates.env.globals["rubric_levels"] = RUBRIC_LEVELS | CASE_RUBRIC_LEVELS
# `static_url("app.css")`: a file's content-hashed, long-cacheable URL.
templates.env.globals["static_url"] = static_url
templates.env.filters["number"] = number
templates.env.filters["table_cell"] = table_cell
templates.env.filters["run_status"] = run_status
templates.env.filters["reading"] = reading_words
templates.env.tests["measurement"] = is_measurement
templates.env.filters["markdown"] = render_markdown
# Keep dict order in |tojson: metric series stay in the order the drill reported them.
templates.env.policies["json.dumps_kwargs"] = {"sort_keys": False}


def compile_every_template() -> None:
    """Compile every template now, in the thread that starts the app, not on a page's first
    request. Jinja's lexer reads number literals with ast.literal_eval, and CPython 3.11.7's AST
    constructor fails when two threads use it at once (drills/core/syntax.py says more): two
    first requests of one page in the thread pool could answer 500. Compiled templates stay in
    the environment's cache (400 entries; there are about 50), shared by every app made in the
    process."""
    for name in templates.env.list_templates(extensions=["html"]):
        templates.env.get_template(name)
