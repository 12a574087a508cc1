"""Models the engine tests share, built with the Python builder."""

from __future__ import annotations

from engine.builder import ProcessBuilder
from engine.model import ProcessModel


def straight_through(key: str = "straight") -> ProcessModel:
    """start -> three handler tasks -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("one", handler="one")
        .service_task("two", handler="two")
        .service_task("three", handler="three")
        .end_event("end")
        .chain("start", "one", "two", "three", "end")
        .build()
    )


def async_work(key: str = "async-work") -> ProcessModel:
    """start -> (async) work handler -> end: the token parks Ready before `work`."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("work", handler="work", async_before=True)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


def fan_out(branches: int, key: str | None = None) -> ProcessModel:
    """start -> split -> N user tasks -> join -> after (handler) -> end."""
    builder = (
        ProcessBuilder(key or f"fan-out-{branches}")
        .start_event("start")
        .parallel_gateway("split")
        .parallel_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("join", "after", "end")
    )
    for n in range(branches):
        builder.user_task(f"task_{n}", f"Task {n}").chain("split", f"task_{n}", "join")
    return builder.build()


def approval(key: str = "approval") -> ProcessModel:
    """start -> prepare (handler) -> review (user task) -> decide (xor) -> approved | rejected."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("prepare", handler="prepare")
        .user_task("review", "Review")
        .exclusive_gateway("decide", default="to_rejected")
        .service_task("book", handler="book")
        .end_event("approved")
        .end_event("rejected")
        .chain("start", "prepare", "review", "decide")
        .flow("decide", "book", id="to_book", condition="${approved && amount <= 1000}")
        .flow("decide", "rejected", id="to_rejected")
        .chain("book", "approved")
        .build()
    )
