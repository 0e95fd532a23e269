"""Small factories for the security tests: rows straight in the database, one client per actor,
the app's routes, and a snapshot of every table to prove that a request changed nothing."""

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from html.parser import HTMLParser
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlalchemy import Engine, MetaData
from sqlmodel import Session
from starlette.routing import BaseRoute

from app.accounts.models import LOCAL_LEARNER_ID, Cohort, CohortMembership, Role, User
from app.cases.models import CaseAttempt, CaseRun, CaseStage
from app.grading.models import Review, SavedComment, Submission
from app.models.time import utcnow
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt, AttemptStatus, Explanation
from tests.conftest import PASSWORD, log_in

DRILL = "overfit-one-batch"
EXPLANATION_FIELDS = ("mechanism", "right_tool", "wrong_tool", "next_check")
RUBRIC_KEYS = ("mechanism", "when_to_use", "honest_prediction", "connects")
TOKEN_IN_PAGE = re.compile(r'name="csrf_token" value="([^"]+)"')


def app_of(client: TestClient) -> FastAPI:
    """The app a test client drives (TestClient types it as any ASGI app)."""
    app = client.app
    assert isinstance(app, FastAPI)
    return app


def engine_of(client: TestClient) -> Engine:
    engine: Engine = client.app.state.engine  # type: ignore[attr-defined]
    return engine


# -- rows --------------------------------------------------------------------------------------
@functools.cache
def password_hash() -> str:
    """PASSWORD as an argon2id hash with the cheapest parameters: the app's hasher verifies it
    through the same code path (argon2 reads its parameters from the hash), in a millisecond
    instead of the half second the recommended parameters take for every factory login."""
    return Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1).hash(PASSWORD)


def add_user(
    engine: Engine, username: str, role: Role = Role.learner, display_name: str | None = None
) -> int:
    """An account that logs in with PASSWORD."""
    user = User(
        username=username,
        display_name=display_name or username.title(),
        role=role,
        password_hash=password_hash(),
    )
    return _save(engine, user)


def add_attempt(
    engine: Engine,
    learner_id: int,
    *,
    fixed: bool,
    prediction: str = "The loss drops to about zero.",
    status: AttemptStatus = AttemptStatus.succeeded,
    hidden_setup: bool = False,
) -> int:
    """A finished attempt of overfit-one-batch: healthy ("fits") or broken ("labels-detached");
    `hidden_setup`: its setup was drawn for the learner (a hidden-bug run)."""
    bug = "none" if fixed else "shuffled-labels"
    finished = utcnow()
    attempt = Attempt(
        learner_id=learner_id,
        drill_slug=DRILL,
        drill_version="1",
        hypothesis="fits",
        prediction_text=prediction,
        knobs={"examples": 8, "bug": bug, "lr": 0.01, "steps": 200},
        seed=0,
        command=f"python -m drills run {DRILL} --set bug={bug} --seed 0",
        status=status,
        signature={
            "final_loss": 0.002 if fixed else 1.38,
            "initial_loss": 1.40,
            "label_entropy": 1.386,
            "chance_loss": 1.386,
        },
        observed_hypothesis="fits" if fixed else "labels-detached",
        started_at=finished - timedelta(seconds=2),
        finished_at=finished,
        compute_s=1.5,
        hidden_setup=hidden_setup,
    )
    return _save(engine, attempt)


EXERCISE = "overfit-shuffled-pairs"


def add_exercise_run(
    engine: Engine,
    learner_id: int,
    *,
    judgement: str = "failed",
    exercise: str = EXERCISE,
    checks: list[dict[str, Any]] | None = None,
    hints_taken: int = 0,
    solution_shown: bool = False,
    diff: str = "",
) -> int:
    """A finished run of an exercise (its attempt and its ExerciseRun): the attempt's id.
    Its checks default to one failed check keyed "k"."""
    from app.exercises.models import ExerciseRun
    from drills.exercises.registry import get_exercise

    spec = get_exercise(exercise)
    finished = utcnow()
    attempt_id = _save(
        engine,
        Attempt(
            learner_id=learner_id,
            drill_slug=spec.drill,
            drill_version="1",
            hypothesis="exercise",
            prediction_text="",
            seed=7,
            command=f"python -m drills exercise run {exercise} --code exercise.py --seed 7",
            status=AttemptStatus.succeeded,
            exercise_slug=exercise,
            started_at=finished - timedelta(seconds=2),
            finished_at=finished,
        ),
    )
    _save(
        engine,
        ExerciseRun(
            attempt_id=attempt_id,
            exercise_slug=exercise,
            code=spec.starter + "\n# edited\n",
            code_sha256="0" * 64,
            diff=diff,
            judgement=judgement,
            checks=checks
            if checks is not None
            else [{"key": "k", "title": "A check", "status": "fail", "message": "not yet"}],
            hints_taken=hints_taken,
            solution_shown=solution_shown,
        ),
    )
    return attempt_id


def add_case_attempt(
    engine: Engine,
    learner_id: int,
    *,
    stage: CaseStage = CaseStage.revealed,
    number: int = 1,
    case_key: str = "a-fresh-head",
    cause: str = "backbone-not-optimized",
) -> tuple[int, int]:
    """A case attempt (by default "a-fresh-head", revealed, with a diagnosis, verdict and
    score) with its finished symptom run: (case attempt id, case run id). Another case of the
    optimizer-membership drill may be named with one of its causes ("a-suspicious-checkpoint"
    offers a code verdict)."""
    revealed = stage == CaseStage.revealed
    case_attempt_id = _save(
        engine,
        CaseAttempt(
            learner_id=learner_id,
            case_key=case_key,
            number=number,
            cause=cause,
            seed=7,
            knobs={"exclude": "backbone"},
            stage=stage,
            diagnosis=None
            if stage == CaseStage.diagnosing
            else {
                "leading": cause,
                "alternatives": [],
                "first_test": "update-sizes",
                "intervention": "optimize every parameter",
                "confirmation": "the backbone moves",
            },
            named_cause=cause if revealed else None,
            fix_key="optimize-all-parameters" if revealed else None,
            score={"cause_named": True, "fix_verified": True, "points": 4, "experiments": []}
            if revealed
            else None,
            revealed_at=utcnow() if revealed else None,
            diagnosed_at=None if stage == CaseStage.diagnosing else utcnow(),
        ),
    )
    finished = utcnow()
    attempt_id = _save(
        engine,
        Attempt(
            learner_id=learner_id,
            drill_slug="optimizer-membership",
            drill_version="1",
            hypothesis="",
            prediction_text="",
            knobs={"exclude": "backbone"},
            seed=7,
            command="python -m drills run optimizer-membership --set exclude=backbone --seed 7",
            status=AttemptStatus.succeeded,
            signature={"final_loss": 0.8},
            started_at=finished - timedelta(seconds=1),
            finished_at=finished,
            case_attempt_id=case_attempt_id,
        ),
    )
    run_id = _save(
        engine, CaseRun(case_attempt_id=case_attempt_id, attempt_id=attempt_id, kind="symptom")
    )
    return case_attempt_id, run_id


def add_round(engine: Engine, learner_id: int, *, answered: bool = True, number: int = 1) -> int:
    """A curve round (by default answered) with its finished run: the backbone left out of the
    optimizer."""
    knobs = {"exclude": "backbone"}
    finished = utcnow()
    round_id = _save(
        engine,
        DiagnosisRound(
            learner_id=learner_id,
            day=finished.date(),
            number=number,
            variant_key="optimizer-membership/backbone-not-optimized",
            drill_slug="optimizer-membership",
            seed=7,
            knobs=knobs,
            diagnosis={
                "leading": "backbone-not-optimized",
                "alternatives": ["head-not-optimized"],
                "first_test": "update-sizes",
                "intervention": "optimize every parameter",
                "confirmation": "the backbone moves",
            }
            if answered
            else None,
            score={
                "leading_right": True,
                "cause_named": True,
                "test_separates": True,
                "would_have": [],
                "points": 2,
                "observed": "backbone-left-out",
            }
            if answered
            else None,
            answered_at=finished if answered else None,
        ),
    )
    _save(
        engine,
        Attempt(
            learner_id=learner_id,
            drill_slug="optimizer-membership",
            drill_version="1",
            hypothesis="",
            prediction_text="",
            knobs=knobs,
            seed=7,
            command="python -m drills run optimizer-membership --set exclude=backbone --seed 7",
            status=AttemptStatus.succeeded,
            signature={"final_loss": 0.8},
            observed_hypothesis="backbone-left-out",
            started_at=finished - timedelta(seconds=1),
            finished_at=finished,
            round_id=round_id,
        ),
    )
    return round_id


def add_unfinished_attempt(
    engine: Engine,
    learner_id: int = LOCAL_LEARNER_ID,
    *,
    status: AttemptStatus = AttemptStatus.queued,
    scheduler_id: str | None = "an-earlier-scheduler",
    queue_turn: int = 0,
) -> int:
    """An attempt the database says is queued or running, with no worker behind it: whatever
    ends it (a test's writer message, the housekeeping) is what the test is about. A running
    app's housekeeping ends it at once unless it names that app's scheduler (or, queued with
    none, it is a held run: the app's backlog sends it)."""
    attempt = Attempt(
        learner_id=learner_id,
        drill_slug=DRILL,
        drill_version="1",
        hypothesis="fits",
        prediction_text="zero",
        knobs={},
        seed=0,
        command=f"python -m drills run {DRILL} --seed 0",
        status=status,
        scheduler_id=scheduler_id,
        queue_turn=queue_turn,
        started_at=utcnow() if status == AttemptStatus.running else None,
        heartbeat_at=utcnow() if status == AttemptStatus.running else None,
    )
    return _save(engine, attempt)


def add_explanation(engine: Engine, attempt_id: int, learner_id: int, text: str) -> int:
    # The text fields by name (the model's other fields are typed at the call).
    texts: dict[str, Any] = dict.fromkeys(EXPLANATION_FIELDS, text)
    return _save(engine, Explanation(attempt_id=attempt_id, learner_id=learner_id, **texts))


def add_submission(
    engine: Engine,
    learner_id: int,
    failed_id: int,
    fixed_id: int,
    *,
    text: str = "The labels were shuffled every step.",
    version: int = 1,
    status: str = "pending",
) -> int:
    texts: dict[str, Any] = dict.fromkeys(EXPLANATION_FIELDS, text)
    submission = Submission(
        learner_id=learner_id,
        drill_slug=DRILL,
        version=version,
        status=status,
        failed_attempt_id=failed_id,
        fixed_attempt_id=fixed_id,
        **texts,
    )
    return _save(engine, submission)


def add_review(
    engine: Engine, submission_id: int, instructor_id: int, *, comment: str, decision: str
) -> int:
    scores = {key: {"score": 1, "comment": comment} for key in RUBRIC_KEYS}
    review = Review(
        submission_id=submission_id,
        instructor_id=instructor_id,
        decision=decision,
        scores=scores,
        comment=comment,
    )
    return _save(engine, review)


def add_cohort(
    engine: Engine, instructor_id: int, *, name: str, code: str, learners: Iterable[int] = ()
) -> int:
    cohort_id = _save(engine, Cohort(name=name, join_code=code, instructor_id=instructor_id))
    for learner_id in learners:
        _save(engine, CohortMembership(cohort_id=cohort_id, learner_id=learner_id))
    return cohort_id


def add_saved_comment(engine: Engine, owner_id: int, text: str) -> int:
    """One of an instructor's saved review comments."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return _save(engine, SavedComment(owner_id=owner_id, text=text, text_sha256=digest))


def add_assignment(
    engine: Engine,
    cohort_id: int,
    author_id: int,
    *,
    title: str = "Week 1",
    due_at: datetime | None = None,
    items: Iterable[tuple[str, str]] = (("case", "a-fresh-head"),),
) -> int:
    """An assignment of the cohort (by default: solve the case add_case_attempt starts), due in
    a week unless `due_at` says otherwise."""
    from app.assignments.models import Assignment

    return _save(
        engine,
        Assignment(
            cohort_id=cohort_id,
            author_id=author_id,
            title=title,
            due_at=due_at or utcnow() + timedelta(days=7),
            items=[{"kind": kind, "key": key} for kind, key in items],
        ),
    )


def _save(engine: Engine, row: Any) -> int:
    with Session(engine) as session:
        session.add(row)
        session.commit()
        session.refresh(row)
        row_id: int = row.id
        return row_id


def exists(engine: Engine, model: Any, row_id: int) -> bool:
    with Session(engine) as session:
        return session.get(model, row_id) is not None


def snapshot(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table in the database (reflected, so a new table is included)."""
    metadata = _reflected(engine)
    with engine.connect() as connection:
        return {
            name: sorted((tuple(row) for row in connection.execute(table.select())), key=repr)
            for name, table in metadata.tables.items()
        }


@functools.cache
def _reflected(engine: Engine) -> MetaData:
    metadata = MetaData()
    metadata.reflect(engine)
    return metadata


def row_counts(engine: Engine) -> dict[str, int]:
    return {name: len(rows) for name, rows in snapshot(engine).items()}


# -- actors ------------------------------------------------------------------------------------
def page_token(client: TestClient) -> str:
    """The CSRF token the login page hands out (creates the session's token if needed)."""
    match = TOKEN_IN_PAGE.search(client.get("/login").text)
    assert match is not None
    return match.group(1)


def visitor(app: FastAPI) -> TestClient:
    """An anonymous browser that has loaded a page, so it holds a valid CSRF token."""
    client = TestClient(app)
    client.headers["X-CSRF-Token"] = page_token(client)
    return client


def signed_in(app: FastAPI, username: str) -> TestClient:
    """A separate browser (own cookie jar) logged in as `username`; sends X-CSRF-Token."""
    client = TestClient(app)
    log_in(client, username)
    return client


# -- routes ------------------------------------------------------------------------------------
def http_routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every FastAPI route of the app (HEAD left out)."""
    # The view is an APIRoute or a RouteContext: each has .path and .methods.
    pairs: list[tuple[BaseRoute, Any]]
    try:  # FastAPI >= 0.16x keeps included routers lazily; flatten them.
        from fastapi.routing import iter_route_contexts
    except ImportError:  # pragma: no cover - older FastAPI lists APIRoute objects directly
        pairs = [(route, route) for route in app.routes]
    else:
        pairs = [(context.original_route, context) for context in iter_route_contexts(app.routes)]
    return {
        (method, view.path)
        for route, view in pairs
        if isinstance(route, APIRoute)
        for method in (view.methods or ())
        if method != "HEAD"
    }


def fill(path: str, **values: object) -> str:
    """A route's path with its {parameters} filled in (KeyError for an unknown parameter)."""
    return re.sub(r"{(\w+)}", lambda match: str(values[match.group(1)]), path)


# -- live markup -------------------------------------------------------------------------------
DANGEROUS_TAGS = {"svg", "img", "iframe", "object", "embed", "math", "base", "style", "frame"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:text/html")


class _Scanner(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        shown = self.get_starttag_text()
        values = dict(attrs)
        if tag == "script":
            self._in_script = True
            if not (values.get("src") or "").startswith("/static/"):
                self.problems.append(f"a script that is not the app's own: {shown}")
        if tag in DANGEROUS_TAGS:
            self.problems.append(f"<{tag}> in the page: {shown}")
        for name, value in attrs:
            if name.startswith(("on", "hx-on")):
                self.problems.append(f"event handler attribute {name!r}: {shown}")
            if name in URL_ATTRIBUTES and value is not None:
                # Browsers ignore whitespace and control characters inside a scheme.
                squeezed = "".join(ch for ch in value if ch > " ").lower()
                if squeezed.startswith(BAD_SCHEMES):
                    self.problems.append(f"{name} with a script URL: {shown}")
            if value:
                self.text.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append(f"inline script: {data[:80]!r}")
        self.text.append(data)


def scan(html: str) -> tuple[list[str], str]:
    """Live markup found in `html`, and everything a reader sees (text and attribute values)."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.problems, "\n".join(scanner.text)


def live_markup(html: str) -> list[str]:
    return scan(html)[0]


# The class the whole-app walks (access matrix, CSRF) stand on: an admin; instructor I1 runs C1
# with learner A; I2 runs C2 with learner B. Everyone signed in, in a browser of their own.
CLASS_USERS = {
    "admin": ("admin", Role.admin),
    "instructor": ("instructor-1", Role.instructor),
    "other_instructor": ("instructor-2", Role.instructor),
    "learner_a": ("learner-a", Role.learner),
    "learner_b": ("learner-b", Role.learner),
}
CLASS_CODES = {"c1": "AAAA2222", "c2": "BBBB3333"}


@dataclass
class TwoCohorts:
    users: dict[str, int]  # actor -> user id
    cohorts: dict[str, int]  # "c1", "c2" -> cohort id
    clients: dict[str, TestClient]  # actor -> a signed-in browser

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def two_cohorts(app: FastAPI, engine: Engine) -> TwoCohorts:
    users = {actor: add_user(engine, name, role) for actor, (name, role) in CLASS_USERS.items()}
    cohorts = {
        "c1": add_cohort(
            engine,
            users["instructor"],
            name="C1",
            code=CLASS_CODES["c1"],
            learners=[users["learner_a"]],
        ),
        "c2": add_cohort(
            engine,
            users["other_instructor"],
            name="C2",
            code=CLASS_CODES["c2"],
            learners=[users["learner_b"]],
        ),
    }
    clients = {actor: signed_in(app, name) for actor, (name, _) in CLASS_USERS.items()}
    return TwoCohorts(users, cohorts, clients)
