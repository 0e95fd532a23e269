"""The app factory: create_app(settings) wires settings, database, workers and routes together."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app import evidence
from app.broker import AttemptEventBroker
from app.config import ROOT, Settings
from app.db import make_engine
from app.routes import api, attempts, pages
from app.runner.dispatcher import AttemptRunner
from app.runner.writer import EvidenceWriter

logger = logging.getLogger(__name__)

RESTART_REASON = (
    "The server restarted while this attempt was queued or running; its run was lost. Run it again."
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    engine = make_engine(settings.database_url)
    broker = AttemptEventBroker()
    writer = EvidenceWriter(engine, broker)
    runner = AttemptRunner(settings, writer)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        with Session(engine) as session:
            reaped = evidence.reap_unfinished(session, reason=RESTART_REASON)
        if reaped:
            logger.warning("ended %d attempts left over from a previous run", len(reaped))
        writer.start()
        # Starting a cluster blocks for seconds; keep it off the event loop.
        await run_in_threadpool(runner.start)
        try:
            yield
        finally:
            await run_in_threadpool(runner.stop)
            writer.stop()
            engine.dispose()

    app = FastAPI(
        title="Drillbook",
        # The bundled API explorers load scripts from a CDN; the schema stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
        summary="Predict, run and explain real PyTorch training failures.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.broker = broker
    app.state.runner = runner
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(pages.router)
    app.include_router(attempts.router)
    app.include_router(api.router)
    return app
