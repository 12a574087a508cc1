"""The console draws a transaction subprocess with its double border, from a Camunda Modeler
file's diagram and from the layout generated for a built model, and the inspector's history
shows a cancelled transaction: the transaction's visit terminated, the cancel end event, each
compensation handler's visit in Compensation mode and the cancel boundary event."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

TRIP = Path(__file__).parent.parent / "data" / "bpmn" / "trip_transaction.bpmn"


def outlines(page: Page, element_id: str) -> int:
    """How many rectangles bpmn-js drew for the element's own shape (a transaction: two, the
    double border; a plain subprocess: one)."""
    shape = f'.djs-element[data-element-id="{element_id}"] > .djs-visual > rect'
    return page.locator(shape).count()


def test_a_cancelled_transaction_in_the_diagram_and_the_history(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(TRIP)
    handle = engine.start_latest("trip_transaction")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    assert outlines(page, "Tx_Book") == 2
    expect(page.locator('#history-body li[data-node="Tx_Book"]')).to_have_class(
        "visit visit-active"
    )

    [task] = engine.user_tasks(handle.id)
    engine.complete_task(task.id, {"confirmed": False})
    transaction = page.locator('#history-body li[data-node="Tx_Book"]')
    expect(transaction).to_have_class("visit visit-terminated")
    expect(transaction).to_contain_text("transaction")
    expect(page.locator('#history-body li[data-node="EndEvent_TxCancelled"]')).to_have_class(
        "visit visit-completed"
    )
    for handler in ("Task_CancelHotel", "Task_CancelFlight"):
        visit = page.locator(f'#history-body li[data-node="{handler}"]')
        expect(visit).to_have_count(1)
        expect(visit).to_have_class("visit visit-completed visit-compensation")
    expect(page.locator('#history-body li[data-node="Event_TxCancelled"]')).to_have_class(
        "visit visit-completed"
    )
    expect(page.locator('.djs-element[data-element-id="Task_Notify"]')).to_have_class(
        "djs-element djs-shape has-token"
    )


def built() -> ProcessModel:
    b = ProcessBuilder("tx-drawn", name="Drawn transaction")
    b.start_event("start")
    b.transaction("tx", "Trip")
    b.start_event("tx_start", parent="tx")
    b.user_task("book", "Book", parent="tx")
    b.end_event("cancel", "Cancel", cancel=True, parent="tx")
    b.chain("tx_start", "book", "cancel")
    b.cancel_boundary("cancelled", "tx", "Cancelled")
    b.sub_process("plain", "Plain")
    b.start_event("plain_start", parent="plain")
    b.end_event("plain_end", parent="plain")
    b.chain("plain_start", "plain_end")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "plain", "end")
    b.chain("cancelled", "end_cancelled")
    return b.build()


def test_a_built_transaction_is_drawn_with_a_double_border(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(built())
    handle = engine.start_latest("tx-drawn")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(diagram).to_have_attribute("data-layout", "generated")
    assert outlines(page, "tx") == 2
    assert outlines(page, "plain") == 1
    expect(page.locator('.djs-element[data-element-id="book"]')).to_have_class(
        "djs-element djs-shape has-token"
    )
