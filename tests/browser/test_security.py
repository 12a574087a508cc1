"""Mutations need the CSRF token and an operator; data is always shown as text."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.console.common import refusal
from app.templating import templates
from engine.api import InstanceHandle
from engine.errors import InvariantViolation, InvariantViolationKind
from tests.browser.conftest import Login
from tests.browser.live import PASSWORD, ConsoleServer
from tests.browser.processes import quick_charge
from tests.browser.test_live_refresh import SETTLED

pytestmark = pytest.mark.browser

SCRIPT = '<script>window.__owned = true</script><img src=x onerror="window.__owned = true">'


def instance_with_incident(console: ConsoleServer) -> tuple[InstanceHandle, str]:
    engine = console.engine
    engine.deploy(quick_charge())
    handle = engine.start_latest("quick-charge", {"note": SCRIPT}, business_key="<b>bk</b>")
    [task] = engine.fetch_and_lock("test-worker", {"charge": 10_000})
    engine.fail_external_task(task["id"], "test-worker", "bank said <script>no</script>")
    [incident] = engine.incidents(instance_id=handle.id)
    return handle, str(incident.id)


def test_post_without_csrf_token_is_refused(console: ConsoleServer, login: Login) -> None:
    handle, incident_id = instance_with_incident(console)
    page = login("operator")
    refused = page.request.post(f"/incidents/{incident_id}/retry")
    assert refused.status == 403
    assert refused.json()["type"] == "Forbidden"
    assert len(console.engine.incidents(instance_id=handle.id)) == 1


def test_viewer_sees_no_actions_and_cannot_retry(console: ConsoleServer, login: Login) -> None:
    handle, incident_id = instance_with_incident(console)
    page = login("viewer")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#incidents-body .incident")).to_have_count(1)
    # No action: the only buttons a viewer sees copy ids to the clipboard.
    expect(page.locator("main button:not([data-copy])")).to_have_count(0)
    expect(page.locator("main [hx-post]")).to_have_count(0)
    expect(page.locator("main form[hx-post]")).to_have_count(0)
    page.goto("/incidents")
    expect(page.locator("tr[data-incident]")).to_have_count(1)
    expect(
        page.locator("main [hx-post], main [data-bulk-retry], main [data-select]")
    ).to_have_count(0)

    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    assert token
    forged = page.request.post(
        f"/incidents/{incident_id}/retry", headers={"X-CSRF-Token": token, "HX-Request": "true"}
    )
    assert forged.status == 403
    # Refused by the permission retrying needs, named in the operator's words.
    assert "Not allowed" in forged.text() and "RETRY_JOB" in forged.text()
    assert len(console.engine.incidents(instance_id=handle.id)) == 1


def test_markup_in_data_renders_as_text(console: ConsoleServer, login: Login) -> None:
    handle, _ = instance_with_incident(console)
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    value = page.locator('#variables-body tr[data-variable="note"] .value')
    expect(value).to_have_text(SCRIPT)
    expect(page.locator("#incidents-body .incident-message")).to_have_text(
        "bank said <script>no</script>"
    )
    expect(page.locator("#inspector-header")).to_contain_text("<b>bk</b>")

    # The refresh that follows the stream's start would draw the panel again over the editor.
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.wait_for_function(SETTLED)
    field = page.locator('#variables-body tr[data-variable="note"]')
    field.get_by_text("Edit").click()
    field.get_by_label("Value").fill(SCRIPT + " again")
    field.get_by_role("button", name="Save").click()
    expect(page.locator("#flash-variables")).to_contain_text("Variable 'note' set")
    expect(value).to_have_text(SCRIPT + " again")
    page.goto("/incidents")
    expect(page.locator("tr[data-incident] .message")).to_contain_text("<script>no</script>")
    assert page.evaluate("window.__owned") is None


def test_refusals_are_shown_in_plain_words(console: ConsoleServer, login: Login) -> None:
    handle, incident_id = instance_with_incident(console)
    console.engine.resolve_incident(incident_id)
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    assert token
    stale = page.request.post(
        f"/incidents/{incident_id}/retry", headers={"X-CSRF-Token": token, "HX-Request": "true"}
    )
    assert stale.status == 409
    assert "Conflict" in stale.text() and "already resolved" in stale.text()

    violation = InvariantViolation(
        InvariantViolationKind.TOKEN_FINALIZED_TWICE, "token t1 is already Completed"
    )
    shown = templates.get_template("_flash.html").render(refusal(violation))
    assert "Refused: this token has already finished." in shown
    assert "Invariant violation: TokenFinalizedTwice" in shown
    assert "token t1 is already Completed" in shown


# An uploaded file with XHTML script elements: at the top level and inside documentation. Were it
# rendered as an XML document in the console's origin, the scripts would run there.
XHTML_SCRIPT = "window.__owned = true; localStorage.setItem('owned', 'yes')"
SCRIPTED_BPMN = f"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:h="http://www.w3.org/1999/xhtml" id="Definitions_1"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <h:script>{XHTML_SCRIPT}</h:script>
  <bpmn:process id="scripted" name="Scripted" isExecutable="true">
    <bpmn:documentation><h:script>{XHTML_SCRIPT}</h:script></bpmn:documentation>
    <bpmn:startEvent id="Start" name="Start">
      <bpmn:outgoing>Flow_1</bpmn:outgoing>
    </bpmn:startEvent>
    <bpmn:endEvent id="End" name="End">
      <bpmn:incoming>Flow_1</bpmn:incoming>
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="Flow_1" sourceRef="Start" targetRef="End"/>
  </bpmn:process>
</bpmn:definitions>
"""


def test_deployed_xml_with_xhtml_scripts_never_runs(
    console: ConsoleServer, login: Login, tmp_path: Path
) -> None:
    source = tmp_path / "scripted.bpmn"
    source.write_text(SCRIPTED_BPMN)
    console.engine.deploy(source)
    page = login("viewer")

    served = page.goto("/definitions/scripted/xml")
    assert served is not None and served.ok
    page.wait_for_load_state("load")
    assert page.evaluate("window.__owned") is None
    headers = served.headers
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "sandbox; default-src 'none'"
    expect(page.locator("body")).to_contain_text("<h:script>")

    page.goto("/definitions/scripted")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator('.djs-element[data-element-id="Start"]')).to_be_visible()
    assert page.evaluate("window.__owned") is None
    assert page.evaluate("localStorage.getItem('owned')") is None

    definition = console.engine.definitions("scripted")[0]
    basic = base64.b64encode(f"viewer:{PASSWORD}".encode()).decode()
    api = page.request.get(
        f"/api/v1/definitions/{definition.id}/xml", headers={"Authorization": f"Basic {basic}"}
    )
    assert api.ok, api.status
    assert api.headers["content-disposition"].startswith("attachment;")
    assert api.headers["content-security-policy"] == "sandbox; default-src 'none'"
