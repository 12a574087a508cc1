"""The Starlette application: a lifespan that owns one engine, and thin routes over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from app.settings import Settings
from engine.api import Engine

ROOT = Path(__file__).resolve().parent.parent
templates = Jinja2Templates(directory=ROOT / "templates")


def create_app(settings: Settings) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        engine = await run_in_threadpool(Engine, settings.database_url, home=settings.home)
        app.state.engine = engine
        if settings.demo:
            from app.demo import install_demo

            await run_in_threadpool(install_demo, engine)
        try:
            yield
        finally:
            await run_in_threadpool(engine.close)

    return Starlette(
        routes=[
            Route("/", status_page),
            Route("/health", health),
            Mount("/static", StaticFiles(directory=ROOT / "static"), name="static"),
        ],
        lifespan=lifespan,
    )


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def status_page(request: Request) -> Response:
    engine = _engine(request)
    definitions = await run_in_threadpool(engine.definitions)
    counts = await run_in_threadpool(engine.instance_counts)
    return templates.TemplateResponse(
        request, "status.html", {"definitions": definitions, "counts": counts}
    )


async def health(request: Request) -> Response:
    counts = await run_in_threadpool(_engine(request).instance_counts)
    return JSONResponse({"status": "ok", "instances": counts})
