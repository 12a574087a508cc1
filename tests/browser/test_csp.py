"""Every console page works under its strict Content-Security-Policy: nothing is blocked (no
inline script without the response's nonce, no eval, no injected style element, nothing from
another origin), the diagrams render, htmx actions run and the live stream keeps pages current."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, expect

from tests.browser.conftest import TIMEOUT_MS, VIEWPORT, Login
from tests.browser.live import PASSWORD, ConsoleServer
from tests.browser.processes import parallel_approval, quick_charge

DMN = Path(__file__).parents[1] / "data" / "dmn"

pytestmark = pytest.mark.browser

# Runs in every document before its own scripts: each CSP violation is reported to the test.
REPORT_VIOLATIONS = """
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolation(
    [location.pathname, e.effectiveDirective, e.blockedURI, e.sample].join(' | '));
});
"""
NONCE = re.compile(r"script-src 'self' 'nonce-([A-Za-z0-9_-]+)'")


def watch(page: Page) -> list[str]:
    """Collect the page's CSP violations (from events and from the console)."""
    violations: list[str] = []
    page.expose_function("__cspViolation", lambda text: violations.append(str(text)))
    page.add_init_script(REPORT_VIOLATIONS)
    page.on(
        "console",
        lambda message: (
            violations.append(f"console: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    return violations


def strict(response: Response | None) -> str:
    """The page's policy, checked to be the strict one; returns its nonce."""
    assert response is not None and response.ok, response
    policy = response.headers["content-security-policy"]
    found = NONCE.search(policy)
    assert found, policy
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert "'unsafe-eval'" not in policy
    return found.group(1)


def visit(page: Page, path: str, *, diagram: bool = False) -> str:
    nonce = strict(page.goto(path))
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    if diagram:
        expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
        expect(page.locator(".djs-element").first).to_be_visible()
    return nonce


def test_every_page_loads_with_no_violation(
    console: ConsoleServer, login: Login, browser: Browser
) -> None:
    engine = console.engine
    deployed = engine.deploy(parallel_approval())
    engine.deploy(quick_charge())
    order = engine.start_latest("parallel-approval", business_key="order-1")
    failing = engine.start_latest("quick-charge", business_key="order-2")
    [task] = engine.fetch_and_lock("csp-worker", {"charge": 10_000})
    engine.fail_external_task(task["id"], "csp-worker", "card declined")
    engine.deploy(DMN / "dish_first.dmn")
    engine.evaluate_decision("dish", {"season": "Fall", "guestCount": 4})

    page = login("operator")
    violations = watch(page)
    nonces = {
        visit(page, "/"),
        visit(page, "/definitions"),
        visit(page, "/definitions/parallel-approval", diagram=True),
        visit(page, "/instances"),
        visit(page, "/incidents"),
        visit(page, "/tasks"),
        visit(page, "/workers"),
        visit(page, "/audit"),
        visit(page, "/decisions"),
        visit(page, "/decisions/dish"),
        visit(page, f"/deployments/{deployed.deployment_id}"),
    }
    nonce = visit(page, f"/instances/{order.id}", diagram=True)
    nonces.add(nonce)
    assert len(nonces) == 12, "every response has a nonce of its own"
    # No script is inline: each is a file of the console's origin. An inline script carrying
    # this response's nonce would run.
    assert page.evaluate("[...document.scripts].every((s) => s.src.startsWith(location.origin))")
    nonced = page.evaluate(
        """(nonce) => { const s = document.createElement('script'); s.nonce = nonce;
                        s.textContent = 'window.__nonced = 1'; document.body.append(s);
                        return window.__nonced === 1; }""",
        nonce,
    )
    assert nonced is True

    # Live updates on the inspector: a task completed elsewhere moves the tokens on the diagram.
    pack = next(t for t in engine.user_tasks(order.id) if t.node_id == "Pack")
    engine.complete_task(pack.id)
    join = '.djs-overlays[data-container-id="Join"] .join-badge'
    expect(page.locator(join)).to_have_text("1/2")

    # An htmx action: retry the incident from its inspector.
    visit(page, f"/instances/{failing.id}", diagram=True)
    expect(page.locator("#incidents-body .incident")).to_have_count(1)
    page.locator("#incidents-body").get_by_role("button", name="Retry").click()
    expect(page.locator("#flash-incidents")).to_contain_text("Retried")
    expect(page.locator("#incidents-body .incident")).to_have_count(0)

    assert violations == [], violations

    # The policy is enforced and the listener hears it: an inline script without the nonce is
    # blocked and reported.
    ran = page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__inline = 1'; document.body.append(s);
                   return window.__inline === 1; }"""
    )
    assert ran is False
    expect_violation(page, violations, lambda v: "script-src" in v and "inline" in v)


def expect_violation(page: Page, violations: list[str], wanted: Callable[[str], bool]) -> None:
    """Wait for the report of a violation `wanted` accepts (reports reach the test while the page
    is waited on)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not any(wanted(v) for v in violations):
        if time.monotonic() > deadline:
            raise AssertionError(f"no such violation reported: {violations}")
        page.wait_for_timeout(50)


def test_login_page_and_form_work_under_the_policy(
    console: ConsoleServer, browser: Browser
) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=console.url)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        violations = watch(page)
        strict(page.goto("/login"))
        expect(page.get_by_label("User")).to_be_visible()
        page.get_by_label("User").fill("viewer")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        assert violations == [], violations

        health = page.request.get("/health").json()
        assert "instances" in health, "a console session sees the counts"
    finally:
        context.close()
