"""The processes the API tests deploy, as BPMN XML."""

from __future__ import annotations

from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition


def straight(key: str = "straight") -> ProcessModel:
    return ProcessBuilder(key).start_event("start").end_event("end").chain("start", "end").build()


def review(key: str = "review") -> ProcessModel:
    """start -> a user task -> end."""
    return (
        ProcessBuilder(key, "Review")
        .start_event("start")
        .user_task("review", "Review it", candidate_groups="reviewers")
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )


def external(key: str = "external", topic: str = "work") -> ProcessModel:
    """start -> an external task -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("work", "Work", topic=topic)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


def waiting(key: str = "waiting", name: str | None = None) -> ProcessModel:
    """start -> split -> a message catch (order-paid) | a signal catch (go) -> join -> end."""
    return (
        ProcessBuilder(key, name)
        .start_event("start")
        .parallel_gateway("split")
        .intermediate_catch_event("paid", message="order-paid")
        .intermediate_catch_event("go", signal="go")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "paid", "join")
        .chain("split", "go", "join")
        .chain("join", "end")
        .build()
    )


def catch(key: str, *, message: str | None = None, signal: str | None = None) -> ProcessModel:
    """start -> one message or signal catch -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .intermediate_catch_event("catch", message=message, signal=signal)
        .end_event("end")
        .chain("start", "catch", "end")
        .build()
    )


def timer(key: str = "timer") -> ProcessModel:
    """start -> a one-hour timer -> end: a job that waits."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .intermediate_catch_event("later", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("end")
        .chain("start", "later", "end")
        .build()
    )


def xml(*models: ProcessModel) -> str:
    return write_bpmn(list(models))


ALL = (
    straight(),
    review(),
    external(),
    waiting(),
    timer(),
    catch("paid", message="paid"),
    catch("signalled", signal="ping"),
)
