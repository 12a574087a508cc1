"""Processes the browser tests run. Built in Python, so they have no diagram layout: the
console generates one."""

from __future__ import annotations

from engine.builder import ProcessBuilder
from engine.model import ProcessModel


def parallel_approval() -> ProcessModel:
    return (
        ProcessBuilder("parallel-approval", name="Parallel approval")
        .start_event("Start", "Start")
        .parallel_gateway("Split", "Split")
        .user_task("Pack", "Pack goods")
        .user_task("Invoice", "Write invoice")
        .parallel_gateway("Join", "Join")
        .user_task("Confirm", "Confirm")
        .end_event("End", "Done")
        .chain("Start", "Split")
        .chain("Split", "Pack", "Join")
        .chain("Split", "Invoice", "Join")
        .chain("Join", "Confirm", "End")
        .build()
    )


def flaky_charge() -> ProcessModel:
    """A user task, then an external task on topic "charge" that a worker serves."""
    return (
        ProcessBuilder("flaky-charge", name="Flaky charge")
        .start_event("Start", "Start")
        .user_task("Prepare", "Prepare")
        .service_task("Charge", "Charge card", topic="charge")
        .end_event("End", "Charged")
        .chain("Start", "Prepare", "Charge", "End")
        .build()
    )


def quick_charge() -> ProcessModel:
    """Straight to the external task on topic "charge"."""
    return (
        ProcessBuilder("quick-charge", name="Quick charge")
        .start_event("Start", "Start")
        .service_task("Charge", "Charge card", topic="charge")
        .end_event("End", "Charged")
        .chain("Start", "Charge", "End")
        .build()
    )
