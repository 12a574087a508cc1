"""A definition's page links to its deployment; the deployment's page lists its files, each a
download of the bytes as uploaded, and the definitions it created, each a link back."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from engine.commands.deployments import Deploy, DuplicateFiltering, Resource
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.compat import processes

pytestmark = pytest.mark.browser

FORM = b'{"id": "review", "components": []}'


def test_definition_links_to_its_deployment_and_files(console: ConsoleServer, login: Login) -> None:
    bpmn = processes.approval("shipped").encode()
    console.engine.run(
        Deploy(
            (Resource("shipped.bpmn", bpmn), Resource("forms/review.form", FORM)),
            "release-7",
            "ci",
            DuplicateFiltering.NONE,
        )
    )
    page = login("viewer")
    page.goto("/definitions/shipped")
    page.locator("#deployment-link").click()
    expect(page.locator("#h-deployment")).to_contain_text("release-7")
    files = page.locator("#deployment-files tbody tr")
    expect(files).to_have_count(2)
    expect(files.nth(0)).to_contain_text("forms/review.form")
    expect(files.nth(1)).to_contain_text("shipped.bpmn")
    for row, content, name in ((0, FORM, "review.form"), (1, bpmn, "shipped.bpmn")):
        with page.expect_download() as downloaded:
            files.nth(row).get_by_role("link", name="Download").click()
        download = downloaded.value
        assert download.suggested_filename == name
        path = download.path()
        assert path.read_bytes() == content
    definitions = page.locator("#deployment-definitions tbody tr")
    expect(definitions).to_have_count(1)
    definitions.get_by_role("link", name="shipped").click()
    expect(page).to_have_url(f"{console.url}/definitions/shipped?version=1")
    expect(page.locator("#h-definition")).to_contain_text("shipped")
