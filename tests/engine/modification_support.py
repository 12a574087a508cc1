"""Models and invariant checks shared by the instance modification tests."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel


def forked(key: str = "mod-fork") -> ProcessModel:
    """start -> fork -> (user task a | external task b) -> join -> user task after -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("fork")
        .user_task("a")
        .service_task("b", topic="mod-work")
        .parallel_gateway("join")
        .user_task("after")
        .end_event("end")
        .chain("start", "fork", "a", "join", "after", "end")
        .chain("fork", "b", "join")
        .build()
    )


def nested(key: str = "mod-nested") -> ProcessModel:
    """start -> user task first -> subprocess sub (inner_start -> user task inner -> inner_end,
    with an input parameter) -> user task last -> end; review is a parallel multi-instance user
    task of three iterations reached after last."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .user_task("first")
        .sub_process("sub")
        .start_event("inner_start", parent="sub")
        .user_task("inner", parent="sub")
        .end_event("inner_end", parent="sub")
        .input_output("sub", inputs={"level": "sub"})
        .user_task("last")
        .user_task("review")
        .multi_instance("review", cardinality=3)
        .end_event("end")
        .chain("start", "first", "sub", "last", "review", "end")
        .chain("inner_start", "inner", "inner_end")
        .build()
    )


def rows(engine: Engine, instance_id: UUID) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the instance's runtime and history tables, to compare before and after."""
    queries = {
        "instance": "SELECT state, version FROM process_instance WHERE id = %s",
        "token": "SELECT id, node_id, state, scope_id, visit_id FROM token WHERE instance_id = %s",
        "join_state": "SELECT gateway_id, scope_key, arrivals FROM join_state "
        "WHERE instance_id = %s",
        "variable": "SELECT scope_key, name, value FROM variable WHERE instance_id = %s",
        "user_task": "SELECT id, state FROM user_task WHERE instance_id = %s",
        "external_task": "SELECT id, state FROM external_task WHERE instance_id = %s",
        "job": "SELECT id FROM job WHERE instance_id = %s",
        "history": "SELECT id, state FROM history WHERE instance_id = %s",
        "outbox": "SELECT seq FROM outbox_event WHERE instance_id = %s",
        "audit_entry": "SELECT id FROM audit_entry WHERE instance_id = %s",
    }
    with engine.pool.connection() as conn:
        return {
            table: sorted(conn.execute(sql, (instance_id,)).fetchall(), key=repr)
            for table, sql in queries.items()
        }


def check_invariants(engine: Engine, instance_id: UUID) -> None:
    """Tokens, joins, waits and history agree with each other."""
    with engine.pool.connection() as conn:
        [(state,)] = conn.execute(
            "SELECT state FROM process_instance WHERE id = %s", (instance_id,)
        ).fetchall()
        live = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT id, node_id, state, visit_id FROM token WHERE instance_id = %s "
                "AND state NOT IN ('Completed', 'Terminated')",
                (instance_id,),
            )
        }
        active_visits = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT id, token_id, node_id FROM history WHERE instance_id = %s "
                "AND state = 'Active'",
                (instance_id,),
            )
        }
        joins = conn.execute(
            "SELECT gateway_id, arrivals FROM join_state WHERE instance_id = %s", (instance_id,)
        ).fetchall()
        open_work = conn.execute(
            "SELECT token_id FROM user_task WHERE instance_id = %s AND state = 'Open' "
            "UNION ALL SELECT token_id FROM external_task WHERE instance_id = %s "
            "AND state = 'Open' UNION ALL SELECT token_id FROM job WHERE instance_id = %s "
            "AND token_id IS NOT NULL",
            (instance_id, instance_id, instance_id),
        ).fetchall()
    if state in ("Completed", "Terminated"):
        assert live == {} and joins == [] and open_work == [] and active_visits == {}
        return
    assert live, f"an active instance without a live token ({state})"
    for visit_id, (token_id, node_id) in active_visits.items():
        assert token_id in live, f"active visit {visit_id} of a finished token"
        assert live[token_id][0] == node_id
    for _, _, visit_id in live.values():
        assert visit_id is None or visit_id in active_visits
    for gateway_id, arrivals in joins:
        assert arrivals, f"an empty join row at {gateway_id}"
        for arrival in arrivals:
            token = live.get(UUID(arrival["token"]))
            assert token is not None and token[0] == gateway_id and token[1] == "Waiting"
    for (token_id,) in open_work:
        assert token_id in live, f"open work of finished token {token_id}"


def positions(engine: Engine, instance_id: UUID) -> dict[str, int]:
    counted: dict[str, int] = {}
    for token in engine.instance(instance_id).tokens():
        counted[token.node_id] = counted.get(token.node_id, 0) + 1
    return dict(sorted(counted.items()))


def audit_rows(engine: Engine, instance_id: UUID) -> list[tuple[Any, ...]]:
    with engine.pool.connection() as conn:
        return conn.execute(
            "SELECT user_id, operation, entity, annotation, details FROM audit_entry "
            "WHERE instance_id = %s ORDER BY at, id",
            (instance_id,),
        ).fetchall()


def scalar(engine: Engine, sql: str, *params: Any) -> Any:
    """The one value `sql` selects."""
    with engine.pool.connection() as conn:
        [(value,)] = conn.execute(sql, params).fetchall()
    return value
