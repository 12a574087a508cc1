"""Console sessions (admins only): who is logged in, from where, since when; end any session, or
every other session of one's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.api.accounts import end_session, end_sessions_of, list_sessions
from app.auth import require, session_of
from app.console.common import engine_of, flash, read, render
from app.gates import Gate
from app.params import Query
from engine.api import Engine
from engine.errors import InterlockError


def _sessions(engine: Engine, idle_seconds: float) -> dict[str, Any]:
    return {"sessions": list_sessions(engine, idle_seconds)}


def _context(request: Request) -> Mapping[str, Any]:
    current = session_of(request)
    return {"current_id": current.id if current else None}


async def _rows(request: Request) -> dict[str, Any]:
    idle = float(request.app.state.authenticator.settings.session_idle_seconds)
    return {**await read(request, _sessions, engine_of(request), idle), **_context(request)}


async def _ended(request: Request, message: str) -> Response:
    """The flash of an ended session; on the sessions page with the list as it now is, swapped
    in out of band, so the page that ended a session shows it gone without waiting for a
    refresh."""
    shown = urlsplit(request.headers.get("HX-Current-URL", "")).path
    if shown != "/sessions":
        return flash(request, message=message)
    context = {"ok": True, "message": message, **await _rows(request)}
    return render(
        request, "_session_ended.html", context, headers={"HX-Trigger": "interlock:changed"}
    )


async def sessions_page(request: Request) -> Response:
    require(request, Gate.ADMINISTER)
    context = await _rows(request)
    if Query(request.query_params).text("fragment"):
        return render(request, "_session_rows.html", context)
    return render(request, "sessions.html", {"page": "sessions", **context})


async def end_one(request: Request) -> Response:
    session_id: UUID = request.path_params["session_id"]
    try:
        require(request, Gate.ADMINISTER)
        await run_in_threadpool(end_session, engine_of(request), session_id)
    except InterlockError as error:
        return flash(request, error=error)
    return await _ended(request, "Session ended: its cookie no longer works.")


async def end_others(request: Request) -> Response:
    current = session_of(request)
    try:
        principal = require(request, Gate.ADMINISTER)
        keep = current.id if current else None
        ended = await run_in_threadpool(end_sessions_of, engine_of(request), principal.name, keep)
    except InterlockError as error:
        return flash(request, error=error)
    return await _ended(request, f"Ended {ended} other session{'s' if ended != 1 else ''}.")


routes = [
    Route("/sessions", sessions_page, methods=["GET"]),
    Route("/sessions/end-others", end_others, methods=["POST"]),
    Route("/sessions/{session_id:uuid}/end", end_one, methods=["POST"]),
]
