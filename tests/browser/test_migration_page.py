"""The migration page in Chromium: an admin opens it from the definition, sees both diagrams,
validates the plan over the running instances and migrates them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Dialog, Page, expect

from engine.api import Engine
from engine.builder import ProcessBuilder
from tests.browser.conftest import TIMEOUT_MS, Login
from tests.browser.live import ConsoleServer
from tests.browser.test_csp import watch

pytestmark = pytest.mark.browser


def confirm(page: Page) -> list[str]:
    """Accept the page's next confirmation; the list it returns gets the question asked."""
    asked: list[str] = []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    return asked


def _two_versions(engine: Engine, key: str) -> None:
    """Version 1 waits at a review; version 2 adds a check after it."""
    v1 = ProcessBuilder(key).start_event("s").user_task("review").end_event("e")
    v2 = ProcessBuilder(key).start_event("s").user_task("review").user_task("check")
    engine.deploy(v1.chain("s", "review", "e").build())
    engine.deploy(v2.end_event("e").chain("s", "review", "check", "e").build())


def test_an_admin_validates_and_migrates_from_the_page(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    _two_versions(engine, "browser_mig")
    instance = engine.start_version("browser_mig", 1)
    target = engine.latest_definition("browser_mig").id

    page = login("admin")
    violations = watch(page)
    page.goto("/definitions/browser_mig?version=1")
    page.locator("#migrate-link").click()
    expect(page.locator("#diagram-source")).to_have_attribute("data-ready", "true")
    expect(page.locator("#diagram-target")).to_have_attribute("data-ready", "true")
    expect(page.locator('#diagram-target .djs-element[data-element-id="check"]')).to_have_count(1)
    expect(page.locator('#diagram-source .djs-element[data-element-id="check"]')).to_have_count(0)
    expect(page.get_by_label("Target of review")).to_have_value("review")

    expect(page.locator("#diagram-source")).to_have_attribute("data-unmapped", "")
    page.get_by_label("Target of review").select_option("")
    expect(page.locator("#diagram-source")).to_have_attribute("data-unmapped", "review")
    expect(page.locator('#diagram-source .djs-element[data-element-id="review"]')).to_have_class(
        re.compile(r"\bunmapped\b")
    )
    expect(page.locator("#migration-run")).to_be_disabled()
    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text(
        "1 running instance matches now: 0 can be migrated, 1 would be refused"
    )
    expect(page.locator(".migration-refusals")).to_contain_text("'review' is not mapped")

    page.get_by_label("Target of review").select_option("review")
    expect(page.locator("#migration-run")).to_be_disabled()  # the plan changed: check again
    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text("1 can be migrated")
    expect(page.locator("#migration-run")).to_have_text("Migrate 1 instance")
    asked = confirm(page)
    page.locator("#migration-run").click()
    expect(page.locator("#migration-result")).to_contain_text("1 instance migrated, 0 refused.")
    assert asked == ["Migrate 1 instance to version 2?"]
    assert engine.instance(instance.id).info().definition_id == target
    assert violations == []


def test_an_operator_sees_the_plan_without_controls(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    for name in ("Review", "Review again"):
        model = ProcessBuilder("browser_mig_ro").start_event("s").user_task("review", name)
        engine.deploy(model.end_event("e").chain("s", "review", "e").build())
    page = login("operator")
    page.goto("/definitions/browser_mig_ro/migrate")
    expect(page.locator("#diagram-target")).to_have_attribute("data-ready", "true")
    expect(page.locator('tr[data-node="review"]')).to_contain_text("review")
    expect(page.locator("#migration-run")).to_have_count(0)
    expect(page.locator("select[name^='target:']")).to_have_count(0)


def test_an_admin_migrates_as_a_batch_and_watches_it_to_the_end(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    _two_versions(engine, "browser_mig_batch")
    # More than one chunk of the batch (50 items), so that it runs in several transactions.
    instances = [engine.start_version("browser_mig_batch", 1) for _ in range(60)]
    target = engine.latest_definition("browser_mig_batch").id

    page = login("admin")
    violations = watch(page)
    page.goto("/definitions/browser_mig_batch/migrate")
    expect(page.locator("#diagram-target")).to_have_attribute("data-ready", "true")
    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text("60 running instances match now")
    expect(page.locator(".migration-sample tbody tr")).to_have_count(20)
    asked = confirm(page)
    page.locator("#migration-batch").click()
    expect(page).to_have_url(re.compile(r"/batches/[0-9a-f-]{36}$"))
    bar = page.locator(".batch-progress progress")
    expect(bar).to_have_attribute("max", "60")
    expect(page.locator("#batch-body")).to_have_attribute(
        "data-state", "Completed", timeout=2 * TIMEOUT_MS
    )
    assert asked == ["Migrate 60 instances to version 2 as a batch?"]
    expect(bar).to_have_attribute("value", "60")
    expect(page.locator(".batch-progress [data-progress-text]")).to_have_text("60 done of 60")
    assert {engine.instance(i.id).info().definition_id for i in instances} == {target}
    assert violations == []
