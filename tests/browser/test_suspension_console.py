"""The console shows and sets suspension: the definition page's Suspended badge and its Suspend
and Activate buttons (an administrator's, with the instances when asked), the inspector's badge
and buttons, and the instance list filtered to suspended instances."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from engine.states import InstanceState
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser


def test_an_admin_suspends_and_activates_a_definition_with_its_instances(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    running = engine.start_latest("parallel-approval", business_key="order-1")
    # An operator sees no suspension control on the definition page.
    operator = login("operator")
    operator.goto("/definitions/parallel-approval")
    expect(operator.locator("#definition-suspension")).to_have_count(0)

    page = login("admin")
    page.goto("/definitions/parallel-approval")
    expect(page.locator("#definition-state")).to_have_count(0)
    page.locator("#definition-suspension input[name=include_instances]").check()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#definition-suspension button", has_text="Suspend").click()
    expect(page.locator("#flash-definition")).to_contain_text("suspended")
    assert engine.latest_definition("parallel-approval").suspended
    assert running.state is InstanceState.SUSPENDED
    page.reload()
    expect(page.locator("#definition-state")).to_have_text("Suspended")

    page.goto(f"/instances/{running.id}")
    expect(page.locator("#instance-state")).to_have_text("Suspended")
    page.goto("/instances?state=Suspended")
    expect(page.locator(f'a[href="/instances/{running.id}"]').first).to_be_visible()

    page.goto("/definitions/parallel-approval")
    page.locator("#definition-suspension input[name=include_instances]").check()
    page.locator("#definition-suspension button", has_text="Activate").click()
    expect(page.locator("#flash-definition")).to_contain_text("activated")
    assert not engine.latest_definition("parallel-approval").suspended
    assert engine.instance(running.id).state is InstanceState.ACTIVE


def test_the_inspector_suspends_and_resumes_an_instance(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval", business_key="order-2")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#instance-state")).to_have_text("Active")
    page.locator(".instance-header button", has_text="Suspend").click()
    expect(page.locator("#flash-header")).to_contain_text("suspended")
    expect(page.locator("#instance-state")).to_have_text("Suspended")
    page.locator(".instance-header button", has_text="Resume").click()
    expect(page.locator("#instance-state")).to_have_text("Active")
