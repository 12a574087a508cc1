"""One live server per test module (starting one per test would dominate the run time), with
the test processes deployed, and HTTP clients per role."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from engine.db.database import connect_url_for
from tests.api import processes
from tests.server import LiveServer, live_server

Client = Callable[..., httpx.Client]


@pytest.fixture(scope="module")
def api(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[LiveServer]:
    name = f"test_api_{uuid.uuid4().hex[:10]}"
    admin_connection.execute(
        sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template_database)
        )
    )
    try:
        with live_server(connect_url_for(pg_server, name)) as server:
            server.engine.deploy(*processes.ALL, name="api tests")
            yield server
    finally:
        admin_connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture(scope="module")
def client(api: LiveServer) -> Iterator[Client]:
    """`client(role)`: an httpx client on /api/v1 with that role's Bearer token."""
    opened: list[httpx.Client] = []

    def make(role: str = "admin", **options: Any) -> httpx.Client:
        headers = api.bearer(role) if role else {}
        made = httpx.Client(base_url=f"{api.url}/api/v1", headers=headers, timeout=30.0, **options)
        opened.append(made)
        return made

    yield make
    for made in opened:
        made.close()


@pytest.fixture(scope="module")
def admin(client: Client) -> httpx.Client:
    return client("admin")


@pytest.fixture(scope="module")
def operator(client: Client) -> httpx.Client:
    return client("operator")


@pytest.fixture(scope="module")
def viewer(client: Client) -> httpx.Client:
    return client("viewer")
