"""Playwright against Debian's Chromium and a real console server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.live import PASSWORD, ConsoleServer
from tests.conftest import VIEWPORT as VIEWPORT
from tests.server import login_token

# How long a browser test waits for what it expects before it fails: for every `expect(...)`
# and every page action. Tests wait for the event itself; the bound only guards against a wait
# that would never end, and is generous so that a busy machine does not fail them.
TIMEOUT_MS = 30_000
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture
def console(database_url: str) -> Iterator[ConsoleServer]:
    server = ConsoleServer(database_url).start()
    try:
        yield server
    finally:
        server.close()


Login = Callable[[str], Page]


@pytest.fixture
def login(browser: Browser, console: ConsoleServer) -> Iterator[Login]:
    """A new browser context logged in as `role`, and a page in it that fails the test on any
    script error."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []

    def open_as(role: str) -> Page:
        context = browser.new_context(viewport=VIEWPORT, base_url=console.url)
        contexts.append(context)
        form = context.request.get("/login")
        response = context.request.post(
            "/login",
            form={
                "name": role,
                "password": PASSWORD,
                "next": "/",
                "login_token": login_token(form.text()),
            },
        )
        assert response.ok, response.status
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda error: errors.append(f"{role}: {error}"))
        return page

    yield open_as
    for context in contexts:
        context.close()
    assert errors == [], errors
