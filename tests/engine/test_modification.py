"""Instance modification: tokens cancelled and started by an operator, one transaction each,
with joins, waits, scopes, multi-instance bodies and history kept consistent."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.modification import ModifyInstance, from_spec, to_spec
from engine.core import audit
from engine.errors import BadRequest, Conflict, NotFound
from engine.model import TimerDefinition
from engine.semantics.modification import (
    CancelNode,
    CancelToken,
    StartAfter,
    StartBefore,
    StartOnFlow,
    start_variables,
)
from engine.states import AuditChannel
from tests.engine.modification_support import (
    audit_rows,
    check_invariants,
    forked,
    nested,
    positions,
    rows,
    scalar,
)

OLGA = audit.Actor("olga", AuditChannel.API)


def _tasks(engine: Engine, instance_id: UUID, node_id: str, state: str = "Open") -> list[Any]:
    return [t for t in engine.user_tasks(instance_id, state) if t.node_id == node_id]


def _work(engine: Engine, instance_id: UUID) -> None:
    """Complete the instance's external task b as a worker does."""
    [task] = engine.fetch_and_lock("w", {"mod-work": 10_000})
    assert task["instance_id"] == str(instance_id)
    engine.complete_external_task(task["id"], "w")


def _visit_states(engine: Engine, instance_id: UUID, node_id: str) -> list[str]:
    with engine.pool.connection() as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT state FROM history WHERE instance_id = %s AND node_id = %s "
                "ORDER BY started_at, id",
                (instance_id, node_id),
            )
        ]


def _joins(engine: Engine, instance_id: UUID) -> list[tuple[str, int]]:
    with engine.pool.connection() as conn:
        return conn.execute(
            "SELECT gateway_id, jsonb_array_length(arrivals) FROM join_state "
            "WHERE instance_id = %s",
            (instance_id,),
        ).fetchall()


def test_a_token_moved_out_of_a_parallel_branch_leaves_the_join_waiting_until_completed(
    engine: Engine,
) -> None:
    engine.deploy(forked())
    instance = engine.start_latest("mod-fork")
    assert positions(engine, instance.id) == {"a": 1, "b": 1}
    with audit.acting(OLGA):
        result = engine.modify(
            instance.id, CancelNode("a"), StartBefore(node_id="after"), annotation="skip a"
        )
    assert result.tokens == {"after": 1, "b": 1} == positions(engine, instance.id)
    assert result.state == "Active"
    assert [t.state for t in _tasks(engine, instance.id, "a", "Retired")] == ["Retired"]
    assert _visit_states(engine, instance.id, "a") == ["Terminated"]
    assert _joins(engine, instance.id) == []
    assert audit_rows(engine, instance.id) == [
        (
            "olga",
            "ModifyProcessInstance",
            "ProcessInstance",
            "skip a",
            {
                "instructions": [
                    {"type": "cancel", "activityId": "a"},
                    {"type": "startBeforeActivity", "activityId": "after"},
                ],
                "skipCustomListeners": False,
                "skipIoMappings": False,
            },
        )
    ]
    check_invariants(engine, instance.id)

    _work(engine, instance.id)  # b arrives at the join, which now waits for a for ever
    assert positions(engine, instance.id) == {"after": 1, "join": 1}
    assert _joins(engine, instance.id) == [("join", 1)]
    check_invariants(engine, instance.id)

    engine.modify(instance.id, StartAfter(node_id="join"))  # completes the join
    assert positions(engine, instance.id) == {"after": 2}
    assert _joins(engine, instance.id) == []
    assert _visit_states(engine, instance.id, "join") == ["Completed"]
    check_invariants(engine, instance.id)
    for task in _tasks(engine, instance.id, "after"):
        engine.complete_task(task.id)
    assert engine.instance(instance.id).state.value == "Completed"
    check_invariants(engine, instance.id)


def test_a_cancelled_arrival_leaves_the_join_and_a_started_flow_completes_it(
    engine: Engine,
) -> None:
    engine.deploy(forked())
    instance = engine.start_latest("mod-fork")
    _work(engine, instance.id)
    assert _joins(engine, instance.id) == [("join", 1)]
    engine.modify(instance.id, CancelNode("join"))
    assert positions(engine, instance.id) == {"a": 1}
    assert _joins(engine, instance.id) == []
    check_invariants(engine, instance.id)
    [task] = _tasks(engine, instance.id, "a")
    engine.complete_task(task.id)
    assert positions(engine, instance.id) == {"join": 1}  # waits for b, which is gone
    engine.modify(instance.id, StartOnFlow(flow_id="Flow_b_join"))
    assert positions(engine, instance.id) == {"after": 1}
    assert _joins(engine, instance.id) == []
    check_invariants(engine, instance.id)


def test_a_token_moved_into_a_subprocess_creates_its_scope_once(engine: Engine) -> None:
    engine.deploy(nested())
    instance = engine.start_latest("mod-nested", variables={"kept": 1})
    [first] = engine.instance(instance.id).tokens()
    variables = start_variables({"kept": 2, "fresh": "root"}, local={"mine": True})
    engine.modify(instance.id, CancelToken(first.token_id), StartBefore(variables, node_id="inner"))
    assert positions(engine, instance.id) == {"inner": 1, "sub": 1}
    assert _visit_states(engine, instance.id, "sub") == ["Active"]
    with engine.pool.connection() as conn:
        tokens = dict(
            conn.execute(
                "SELECT node_id, id FROM token WHERE instance_id = %s AND state = 'Waiting'",
                (instance.id,),
            ).fetchall()
        )
        [(scope_of_inner,)] = conn.execute(
            "SELECT scope_id FROM token WHERE id = %s", (tokens["inner"],)
        ).fetchall()
        found = conn.execute(
            "SELECT scope_key, name, value FROM variable WHERE instance_id = %s "
            "ORDER BY scope_key, name",
            (instance.id,),
        ).fetchall()
    assert scope_of_inner == tokens["sub"]
    assert sorted((key, name) for key, name, _ in found) == sorted(
        [
            ("", "fresh"),
            ("", "kept"),
            (str(tokens["inner"]), "mine"),
            (str(tokens["sub"]), "level"),  # the subprocess's input parameter ran
        ]
    )
    assert engine.instance(instance.id).variables() == {"kept": 2, "fresh": "root"}
    check_invariants(engine, instance.id)

    engine.modify(instance.id, StartBefore(node_id="inner"))  # the one scope is reused
    assert positions(engine, instance.id) == {"inner": 2, "sub": 1}
    for task in _tasks(engine, instance.id, "inner"):
        engine.complete_task(task.id)
    assert positions(engine, instance.id) == {"last": 1}
    assert _visit_states(engine, instance.id, "sub") == ["Completed"]
    check_invariants(engine, instance.id)


def test_skipping_io_mappings_and_naming_the_ancestor(engine: Engine) -> None:
    engine.deploy(nested())
    instance = engine.start_latest("mod-nested")
    engine.modify(instance.id, CancelNode("first"), StartBefore(node_id="inner"))
    engine.modify(instance.id, StartBefore(node_id="sub"), skip_io_mappings=True)
    assert positions(engine, instance.id) == {"inner": 2, "sub": 2}
    with pytest.raises(BadRequest, match="subprocess 'sub' has 2 active instances"):
        engine.modify(instance.id, StartBefore(node_id="inner"))
    with engine.pool.connection() as conn:
        scopes = conn.execute(
            "SELECT t.id, t.visit_id, count(v.name) FROM token t LEFT JOIN variable v "
            "ON v.scope_key = t.id::text WHERE t.instance_id = %s AND t.node_id = 'sub' "
            "GROUP BY t.id, t.visit_id ORDER BY count(v.name)",
            (instance.id,),
        ).fetchall()
    assert [count for _, _, count in scopes] == [0, 1]  # the second skipped `level`
    skipped_id, skipped_visit, _ = scopes[0]
    engine.modify(instance.id, StartBefore(node_id="inner", ancestor=skipped_visit))
    inside = scalar(
        engine, "SELECT count(*) FROM token WHERE scope_id = %s AND state = 'Waiting'", skipped_id
    )
    assert inside == 2
    check_invariants(engine, instance.id)


def _at_review(engine: Engine) -> Any:
    instance = engine.start_latest("mod-nested")
    engine.modify(instance.id, CancelNode("first"), StartBefore(node_id="review"))
    assert positions(engine, instance.id) == {"review": 4}  # the body and three iterations
    return instance


def test_an_iteration_cancelled_leaves_the_body_one_iteration_shorter(engine: Engine) -> None:
    engine.deploy(nested())
    instance = _at_review(engine)
    [one, *rest] = _tasks(engine, instance.id, "review")
    visit_id = scalar(engine, "SELECT visit_id FROM token WHERE id = %s", one.token_id)
    engine.modify(instance.id, CancelToken(visit_id))  # by its activity instance id
    assert positions(engine, instance.id) == {"review": 3}
    check_invariants(engine, instance.id)
    for task in rest:
        engine.complete_task(task.id)
    assert engine.instance(instance.id).state.value == "Completed"
    check_invariants(engine, instance.id)


def test_a_token_moved_out_of_a_multi_instance_ends_the_body(engine: Engine) -> None:
    engine.deploy(nested())
    instance = _at_review(engine)
    engine.modify(instance.id, CancelNode("review#multiInstanceBody"), StartBefore(node_id="last"))
    assert positions(engine, instance.id) == {"last": 1}
    assert len(_tasks(engine, instance.id, "review", "Retired")) == 3
    assert _visit_states(engine, instance.id, "review") == ["Terminated"] * 4
    check_invariants(engine, instance.id)


def test_starting_after_a_node_takes_its_one_outgoing_flow(engine: Engine) -> None:
    engine.deploy(nested())
    instance = engine.start_latest("mod-nested")
    result = engine.modify(instance.id, CancelNode("first"), StartAfter(node_id="sub"))
    assert result.tokens == {"last": 1}
    assert _visit_states(engine, instance.id, "sub") == []  # after it: never entered
    check_invariants(engine, instance.id)


def test_cancelling_the_last_token_terminates_the_instance(engine: Engine) -> None:
    engine.deploy(nested())
    instance = engine.start_latest("mod-nested")
    with audit.acting(OLGA):
        result = engine.modify(instance.id, CancelNode("first"))
    assert result.state == "Terminated" == engine.instance(instance.id).state.value
    assert result.tokens == {}
    assert [t.state for t in _tasks(engine, instance.id, "first", "Retired")] == ["Retired"]
    assert len(audit_rows(engine, instance.id)) == 1
    check_invariants(engine, instance.id)
    # Cancelled and started in one modification, the instance goes on.
    other = engine.start_latest("mod-nested")
    engine.modify(other.id, CancelNode("first"), StartBefore(node_id="last"))
    assert engine.instance(other.id).state.value == "Active"


def test_cancelling_a_call_activity_ends_the_called_instance(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("mod-callee")
        .start_event("s")
        .user_task("wait")
        .end_event("e")
        .chain("s", "wait", "e")
        .build()
    )
    engine.deploy(
        ProcessBuilder("mod-caller")
        .start_event("s")
        .call_activity("call", called_element="mod-callee")
        .user_task("then")
        .end_event("e")
        .chain("s", "call", "then", "e")
        .build()
    )
    caller = engine.start_latest("mod-caller")
    [called] = engine.instance(caller.id).children()
    with pytest.raises(Conflict, match="called"):
        engine.modify(called.id, CancelNode("wait"))  # its caller would wait for ever
    engine.modify(caller.id, CancelNode("call"), StartBefore(node_id="then"))
    assert called.state.value == "Terminated"
    assert positions(engine, caller.id) == {"then": 1}
    check_invariants(engine, caller.id)
    check_invariants(engine, called.id)


@pytest.mark.parametrize(
    ("instructions", "error"),
    [
        (
            (StartBefore(node_id="nowhere"),),
            "instruction 1 (startBeforeActivity): activity 'nowhere' is not in process 'mod-fork'",
        ),
        (
            (CancelNode("a"), StartOnFlow(flow_id="Flow_x")),
            "instruction 2 (startTransition): sequence flow 'Flow_x' is not in process 'mod-fork'",
        ),
        ((StartAfter(node_id="fork"),), "activity 'fork' has 2 outgoing sequence flows"),
        ((StartBefore(node_id="join"),), "parallel gateway 'join' joins 2 flows"),
        ((CancelNode("after"),), "activity 'after' has no active instance to cancel"),
        (
            (CancelNode("a"), CancelToken(UUID(int=7))),
            "instruction 2 (cancel): activity "
            "instance 00000000-0000-0000-0000-000000000007 is not active",
        ),
        ((), "at least one instruction"),
    ],
)
def test_an_invalid_modification_writes_nothing(
    engine: Engine, instructions: tuple[Any, ...], error: str
) -> None:
    if not engine.definitions("mod-fork"):
        engine.deploy(forked())
    instance = engine.start_latest("mod-fork")
    before = rows(engine, instance.id)
    with (
        audit.acting(OLGA),
        pytest.raises(BadRequest, match=error.replace("(", r"\(").replace(")", r"\)")),
    ):
        engine.modify(instance.id, *instructions)
    assert rows(engine, instance.id) == before
    assert audit_rows(engine, instance.id) == []


def test_a_suspended_ended_or_unknown_instance_is_refused(engine: Engine) -> None:
    engine.deploy(forked())
    instance = engine.start_latest("mod-fork")
    instance.suspend()
    with pytest.raises(Conflict, match="suspended"):
        engine.modify(instance.id, CancelNode("a"))
    instance.resume()
    instance.cancel()
    with pytest.raises(Conflict, match="already Terminated"):
        engine.modify(instance.id, StartBefore(node_id="a"))
    with pytest.raises(NotFound):
        engine.modify(UUID(int=9), StartBefore(node_id="a"))


def test_a_preview_answers_the_positions_and_writes_nothing(engine: Engine) -> None:
    engine.deploy(forked())
    instance = engine.start_latest("mod-fork")
    before = rows(engine, instance.id)
    with audit.acting(OLGA):
        preview = engine.preview_modification(
            instance.id, CancelNode("b"), StartBefore(node_id="after")
        )
    assert preview.tokens == {"a": 1, "after": 1}
    assert preview.state == "Active"
    assert rows(engine, instance.id) == before
    ended = engine.preview_modification(instance.id, CancelNode("a"), CancelNode("b"))
    assert (ended.state, ended.tokens) == ("Terminated", {})
    assert rows(engine, instance.id) == before


def test_an_inclusive_join_fires_once_its_last_upstream_token_is_cancelled(
    engine: Engine,
) -> None:
    engine.deploy(
        ProcessBuilder("mod-inclusive")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("x")
        .user_task("y")
        .inclusive_gateway("merge")
        .user_task("after")
        .end_event("end")
        .chain("start", "split", "x", "merge", "after", "end")
        .chain("split", "y", "merge")
        .build()
    )
    instance = engine.start_latest("mod-inclusive")
    [x] = _tasks(engine, instance.id, "x")
    engine.complete_task(x.id)
    assert positions(engine, instance.id) == {"merge": 1, "y": 1}
    engine.modify(instance.id, CancelNode("y"))
    assert positions(engine, instance.id) == {"after": 1}
    assert _joins(engine, instance.id) == []
    check_invariants(engine, instance.id)


def test_a_cancelled_task_takes_its_boundary_timer_and_a_boundary_event_can_be_started(
    engine: Engine,
) -> None:
    engine.deploy(
        ProcessBuilder("mod-boundary")
        .start_event("start")
        .user_task("t")
        .boundary_event("late", "t", timer=TimerDefinition(kind="duration", text="PT1H"))
        .user_task("escalated")
        .end_event("end")
        .chain("start", "t", "end")
        .chain("late", "escalated")
        .build()
    )
    instance = engine.start_latest("mod-boundary")
    jobs = "SELECT count(*) FROM job WHERE instance_id = %s"
    assert scalar(engine, jobs, instance.id) == 1
    engine.modify(instance.id, CancelNode("t"), StartBefore(node_id="late"))
    assert positions(engine, instance.id) == {"escalated": 1}
    assert scalar(engine, jobs, instance.id) == 0
    check_invariants(engine, instance.id)


def test_a_modification_stored_as_json_reads_back_the_same() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    command = ModifyInstance(
        UUID(int=1),
        (
            CancelNode("a"),
            CancelToken(UUID(int=2)),
            StartBefore(start_variables({"n": 1, "at": when}), UUID(int=3), node_id="x"),
            StartAfter(start_variables(local={"doc": {"k": [1]}}), node_id="y"),
            StartOnFlow(flow_id="f"),
        ),
        skip_custom_listeners=True,
        annotation="why",
        definition_id="def:1",
    )
    stored = json.loads(json.dumps(to_spec(command)))
    assert from_spec(UUID(int=1), stored) == command
    with pytest.raises(BadRequest, match="unknown type 'jump'"):
        from_spec(UUID(int=1), {"instructions": [{"type": "jump"}]})


def test_starting_before_an_event_subprocess_starts_a_new_run_of_it(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("mod-event-sub")
        .start_event("start")
        .user_task("work")
        .end_event("end")
        .chain("start", "work", "end")
        .sub_process("changed", triggered_by_event=True)
        .start_event("changed_start", parent="changed", message="changed", interrupting=False)
        .user_task("recheck", parent="changed")
        .end_event("changed_end", parent="changed")
        .chain("changed_start", "recheck", "changed_end")
        .build()
    )
    instance = engine.start_latest("mod-event-sub")
    engine.modify(instance.id, StartBefore(node_id="changed"), StartBefore(node_id="changed"))
    assert positions(engine, instance.id) == {"changed": 2, "recheck": 2, "work": 1}
    check_invariants(engine, instance.id)
    for task in _tasks(engine, instance.id, "recheck"):
        engine.complete_task(task.id)
    assert positions(engine, instance.id) == {"work": 1}
    assert _visit_states(engine, instance.id, "changed") == ["Completed", "Completed"]
    check_invariants(engine, instance.id)
