"""The app factory: create_app(settings) wires settings, database, workers and routes together."""

import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES, GZipMiddleware
from starlette.middleware.sessions import SessionMiddleware

from app import features, page_hooks
from app.accounts import admin_routes as admin
from app.accounts import cohort_routes as cohorts
from app.accounts import routes as auth
from app.assignments import routes as assignments
from app.cases import evidence_routes as case_evidence
from app.cases import routes as cases
from app.catalogue import progress_routes as progress
from app.catalogue import routes as pages
from app.cohort_report import routes as cohort_report
from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import check_schema_is_current
from app.core.private_files import private_database, private_directory
from app.exercises import api as exercise_api
from app.exercises import case_verdict_routes as exercise_case_verdicts
from app.exercises import routes as exercise_routes
from app.grading import comment_routes as saved_comments
from app.grading import routes as reviews
from app.grading import submission_routes as submissions
from app.grading import work_review_routes as work_reviews
from app.grading.revisions import routes as revisions
from app.portfolio import routes as portfolio
from app.portfolio.signing import load_or_create_key
from app.practice import round_routes as rounds
from app.practice import routes as practice
from app.practice import streak_routes as streak
from app.runner.dispatcher import AttemptRunner
from app.runs import api, replays
from app.runs import routes as attempts
from app.runs.broker import AttemptEventBroker
from app.runs.change_feed import change_feed_for
from app.runs.evidence_writer import EvidenceWriter
from app.runs.fair_share import TooManyRuns
from app.runs.housekeeping import Housekeeping
from app.runs.leadership import leadership_for
from app.security.body_limit import BodyLimit
from app.security.csrf import require_csrf
from app.security.headers import SecurityHeaders
from app.security.secret import SESSION_SECRET_FILE, session_secret
from app.security.text import require_storable_text
from app.security.throttle import Limit, LoginThrottle
from app.web.deps import LoginRequired
from app.web.error_pages import http_error, server_error, validation_error
from app.web.static_assets import HashedStaticFiles, site_assets
from app.web.templating import compile_every_template
from drills.sandbox import available as sandbox_available

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 24 * 1024 * 1024

SSE_CONTENT_TYPE = "text/event-stream"

RESTART_REASON = "The server restarted while this replay was queued; run it again."


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    features.install()  # what cases, review and exercises do when a run ends (app/runs/lifecycle)
    page_hooks.install()  # what grading adds to the case and round pages (app/web/pages.py)
    compile_every_template()  # before any request thread could compile one (app/web/templating)
    private_directory(settings.data_dir)
    if settings.sqlite_path is not None:
        private_database(settings.sqlite_path)
    engine = make_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout_s=settings.db_pool_timeout_s,
    )
    # The writer and housekeeping threads get connections of their own: however busy the
    # request handlers are, ending a run never waits for the shared pool.
    writer_engine = make_engine(settings.database_url, pool_size=2, max_overflow=1)
    broker = AttemptEventBroker()
    writer = EvidenceWriter(writer_engine, broker)
    runner = AttemptRunner(settings, sink=writer)
    housekeeping = Housekeeping(
        writer_engine,
        runner,
        settings,
        leadership_for(settings.database_url),
        on_ended=broker.publish,
    )
    change_feed = change_feed_for(settings.database_url, engine, broker)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        check_schema_is_current(engine, settings.database_url)
        writer.start()
        # Starting a cluster blocks for seconds; keep it off the event loop.
        await run_in_threadpool(runner.start)
        if runner.embedded:  # a new cluster: nothing an earlier one was replaying will report
            with Session(engine) as session:
                replays.reap_unfinished_replays(session, reason=RESTART_REASON)
        # Its first sweep ends the attempts an earlier cluster left unfinished.
        await run_in_threadpool(housekeeping.start)
        # Starts one tiny sandbox (once per process): where none can start, say so once; the
        # exercise pages say it too, and everything else works.
        if (off := await run_in_threadpool(sandbox_available)) is not None:
            logger.warning("Code exercises are off: %s", off)
        change_feed.start()
        try:
            yield
        finally:
            change_feed.stop()
            housekeeping.stop()
            await run_in_threadpool(runner.stop)
            writer.stop()
            writer_engine.dispose()
            engine.dispose()

    app = FastAPI(
        title="Drillbook",
        # The bundled API explorers load scripts from a CDN; the schema stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
        summary="Predict, run and explain real PyTorch training failures.",
        lifespan=lifespan,
        # Every state-changing request, on every route, must carry the session's CSRF token;
        # every text a request carries must be storable (no NUL, no lone surrogate).
        dependencies=[Depends(require_csrf), Depends(require_storable_text)],
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.broker = broker
    app.state.runner = runner
    app.state.writer = writer
    # Hashed once, at start-up: every page links its scripts and stylesheet under these names.
    app.state.static_assets = site_assets()
    # Generated on first start, kept in the data directory (never the database): signs exports.
    app.state.signing_key = load_or_create_key(settings.data_dir)
    app.state.login_throttle = LoginThrottle(
        per_name=Limit(settings.login_max_failures, settings.login_window_s),
        per_client=Limit(settings.login_client_max_failures, settings.login_client_window_s),
        registrations=Limit(
            settings.registration_client_max, settings.registration_client_window_s
        ),
    )
    secret = session_secret(
        settings.secret_key,
        environment=settings.environment,
        fallback_file=settings.data_dir / SESSION_SECRET_FILE,
    )
    # Curve rounds and cases are drawn with keys of the server's (see
    # drills.practice.rounds.draw_round and drills.cases.draw).
    app.state.draw_key = hashlib.sha256(b"drillbook curve rounds\x00" + secret.encode()).digest()
    app.state.case_draw_key = hashlib.sha256(b"drillbook case draws\x00" + secret.encode()).digest()
    # And so are hidden-bug runs' setups (drills.practice.hidden_setups).
    app.state.hidden_setup_key = hashlib.sha256(
        b"drillbook hidden setups\x00" + secret.encode()
    ).digest()
    # Innermost: no request body may exceed MAX_REQUEST_BYTES, checked while it streams in
    # (before the CSRF check parses a form): the largest legitimate one is a portfolio upload
    # of up to 20 MB. Its 413 passes the session and security-header layers like any answer.
    app.add_middleware(BodyLimit, max_bytes=MAX_REQUEST_BYTES, refuse=http_error)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret,
        session_cookie="drillbook_session",
        same_site="lax",
        https_only=settings.secure_cookies,
        max_age=14 * 24 * 3600,
    )
    # Every response passing the session layer gets the headers.
    app.add_middleware(SecurityHeaders, https_only=settings.secure_cookies)
    # Outermost: compresses what the layers inside produced, headers included. Never the live
    # event streams: compressing one would hold events back in the compressor. Starlette
    # already skips text/event-stream; it is named here so no upgrade can drop it silently.
    app.add_middleware(
        GZipMiddleware,
        compresslevel=6,
        exclude_content_types=(*DEFAULT_EXCLUDED_CONTENT_TYPES, SSE_CONTENT_TYPE),
    )
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_exception_handler(TooManyRuns, _too_many_runs)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, server_error)
    app.mount("/static", HashedStaticFiles(app.state.static_assets), name="static")
    for module in (
        # First: the API's routes are the ones a run's requests take (its POST and its event
        # stream), and a request is matched against the routes in this order. No route of another
        # module matches an /api/... path the API serves, so the order changes no answer, only
        # how many routes each API request is tried against (about 60 before, 7 now).
        api,
        auth,
        pages,
        progress,
        attempts,
        cases,
        case_evidence,
        submissions,
        reviews,
        work_reviews,
        saved_comments,
        cohorts,
        cohort_report,  # after cohorts: POST /cohorts/join is not a cohort's id
        assignments,
        portfolio,
        revisions,
        rounds,  # before practice: /practice/rounds is not a review item's key
        practice,
        streak,
        admin,
    ):
        app.include_router(module.router)
    app.include_router(case_evidence.api_router)
    app.include_router(exercise_api.api_router)
    app.include_router(exercise_routes.router)
    app.include_router(exercise_case_verdicts.router)
    return app


async def _too_many_runs(request: Request, error: Exception) -> Response:
    """A run refused for its learner's share (app/runs/fair_share.py), wherever it was asked for: a
    429 page, or JSON under /api/. The drill form and the case pages say it in place instead."""
    return await http_error(request, StarletteHTTPException(429, str(error)))


async def _login_required(request: Request, _: Exception) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": "Log in first."}, status_code=401)
    target = f"/login?next={request.url.path}"
    if request.headers.get("HX-Request") == "true":
        return Response(status_code=401, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)
