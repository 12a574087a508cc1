"""Wide models against real PostgreSQL: a split of 5,000 branches deploys, starts, joins and
cancels, and models beyond the limits are refused before anything is written.

The cancellation's statements are counted on the wire (the command connection's libpq trace) and
the tables' sequential scans in PostgreSQL's statistics: the same handful of statements whether
the instance has 3 branches or 5,000, and no scan of a table per token. The Python the commands
run is counted by lines, as in tests/unit/test_parse_scaling.py: twice the branches, about twice
the work.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import psycopg
import pytest
from psycopg import pq

from engine.api import Engine
from engine.bpmn import write_bpmn
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.errors import ModelError
from engine.model import ProcessModel, TimerDefinition
from tests.unit.test_parse_scaling import LINEAR, operations

WIDE = 5_000
TABLES = (
    "process_definition",
    "deployment",
    "process_instance",
    "token",
    "join_state",
    "user_task",
    "external_task",
    "job",
    "event_subscription",
    "history",
    "outbox",
)


def waiting_split(branches: int, *, key: str = "wide") -> ProcessModel:
    """Start, a split into `branches` branches that wait (a user task with a timer on its edge,
    an external task, alternately), a join, end."""
    builder = ProcessBuilder(key).start_event("Start").parallel_gateway("Split")
    builder.parallel_gateway("Join").end_event("End").chain("Start", "Split")
    builder.chain("Join", "End")
    timer = TimerDefinition(kind="duration", text="P1D")
    for n in range(branches):
        if n % 2:
            builder.service_task(f"Work_{n}", topic="wide")
        else:
            builder.user_task(f"Work_{n}")
            builder.boundary_event(f"Late_{n}", f"Work_{n}", timer=timer)
            builder.end_event(f"LateEnd_{n}").chain(f"Late_{n}", f"LateEnd_{n}")
        builder.chain("Split", f"Work_{n}", "Join")
    return builder.build()


def settings_for(model: ProcessModel, branches: int) -> EngineSettings:
    return EngineSettings(max_fan_out=branches, max_process_nodes=len(model.nodes))


def rows(database_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(sql, params).fetchall()


def counts(database_url: str) -> dict[str, int]:
    with psycopg.connect(database_url) as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            for table in TABLES
        }


def sequential_scans(database_url: str) -> dict[str, int]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT relname, seq_scan FROM pg_stat_user_tables WHERE relname = ANY(%s)",
            (list(TABLES),),
        ).fetchall()
    return dict(found)


@contextmanager
def traced_command(engine: Engine, database_url: str) -> Iterator[dict[str, Any]]:
    """What the block's commands send on the engine's one command connection: statements (the
    Execute and Query messages of the connection's libpq trace) and each table's sequential
    scans (its backend's statistics, flushed before and after)."""
    seen: dict[str, Any] = {}

    def flushed_scans() -> dict[str, int]:
        with engine.command_pool.connection() as conn:
            conn.execute("SELECT pg_stat_force_next_flush()")  # flushed when it goes idle
        return sequential_scans(database_url)

    before = flushed_scans()
    with tempfile.TemporaryFile("w+") as trace:
        with engine.command_pool.connection() as conn:
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield seen
        finally:
            with engine.command_pool.connection() as conn:
                conn.pgconn.untrace()
        trace.seek(0)
        seen["statements"] = sum(
            1 for line in trace if re.match(r"F\t\d+\t(Execute|Query)\t", line)
        )
    after = flushed_scans()
    seen["seq_scans"] = {table: after.get(table, 0) - before.get(table, 0) for table in TABLES}


@pytest.fixture
def wide_engine(database_url: str) -> Iterator[Engine]:
    """One command connection, so the trace sees every command; limits raised for WIDE."""
    model = waiting_split(WIDE)
    with Engine(
        database_url, migrate=False, pool_size=1, settings=settings_for(model, WIDE)
    ) as engine:
        yield engine


def cancel_traced(engine: Engine, database_url: str, key: str) -> tuple[UUID, dict[str, Any]]:
    instance = engine.start_latest(key)
    with traced_command(engine, database_url) as seen:
        assert instance.cancel().value == "Terminated"
    return instance.id, seen


@pytest.mark.slow
def test_a_split_of_5000_branches_cancels_in_one_command_of_a_few_statements(
    wide_engine: Engine, database_url: str
) -> None:
    engine = wide_engine
    engine.deploy(waiting_split(3, key="narrow"), waiting_split(WIDE))
    _, narrow = cancel_traced(engine, database_url, "narrow")
    instance_id, wide = cancel_traced(engine, database_url, "wide")

    # Lock, load, one write, with BEGIN and COMMIT: as many statements as for 3 branches, and no
    # table scanned once per token (a scan per token would count thousands).
    assert wide["statements"] == narrow["statements"] <= 6
    assert all(scans <= 2 for scans in wide["seq_scans"].values()), wide["seq_scans"]

    tokens = dict(
        rows(
            database_url,
            "SELECT state, count(*) FROM token WHERE instance_id = %s GROUP BY state",
            instance_id,
        )
    )
    assert tokens == {"Terminated": WIDE, "Completed": 1}  # the branches; the token that forked
    work = rows(
        database_url,
        "SELECT 'user', state, count(*) FROM user_task WHERE instance_id = %s GROUP BY state "
        "UNION ALL SELECT 'external', state, count(*) FROM external_task WHERE instance_id = %s "
        "GROUP BY state",
        instance_id,
        instance_id,
    )
    assert sorted(work) == [("external", "Retired", WIDE // 2), ("user", "Retired", WIDE // 2)]
    [(jobs, subscriptions, open_visits, joins)] = rows(
        database_url,
        "SELECT (SELECT count(*) FROM job WHERE instance_id = i), "
        "(SELECT count(*) FROM event_subscription WHERE instance_id = i), "
        "(SELECT count(*) FROM history WHERE instance_id = i AND ended_at IS NULL), "
        "(SELECT count(*) FROM join_state WHERE instance_id = i) FROM (SELECT %s::uuid AS i) AS x",
        instance_id,
    )
    assert (jobs, subscriptions, open_visits, joins) == (0, 0, 0, 0)
    terminated = rows(
        database_url,
        "SELECT count(*) FROM history WHERE instance_id = %s AND state = 'Terminated'",
        instance_id,
    )
    assert terminated == [(WIDE,)]


def straight_split(branches: int, *, key: str = "joined") -> ProcessModel:
    """Start, a split into `branches` tasks that pass straight on to a join, end."""
    builder = ProcessBuilder(key).start_event("Start").parallel_gateway("Split")
    builder.parallel_gateway("Join").end_event("End").chain("Start", "Split")
    builder.chain("Join", "End")
    for n in range(branches):
        builder.task(f"Pass_{n}").chain("Split", f"Pass_{n}", "Join")
    return builder.build()


def ending_in_a_subprocess(branches: int, *, key: str) -> ProcessModel:
    """Start, a subprocess whose split leads to `branches` end events, end: the subprocess
    completes when its last branch ends."""
    builder = ProcessBuilder(key).start_event("Start").sub_process("Scope").end_event("End")
    builder.start_event("In", parent="Scope").parallel_gateway("Split", parent="Scope")
    builder.chain("Start", "Scope", "End").chain("In", "Split")
    for n in range(branches):
        builder.end_event(f"Out_{n}", parent="Scope").chain("Split", f"Out_{n}")
    return builder.build()


def waiting_for_a_signal(branches: int, *, key: str) -> ProcessModel:
    """Start, a split into `branches` catch events of the signal named `key`, each to its end."""
    builder = ProcessBuilder(key).start_event("Start").parallel_gateway("Split")
    builder.chain("Start", "Split")
    for n in range(branches):
        builder.intermediate_catch_event(f"Wait_{n}", signal=key).end_event(f"End_{n}")
        builder.chain("Split", f"Wait_{n}", f"End_{n}")
    return builder.build()


def command_work(engine: Engine, branches: int) -> dict[str, int]:
    """The lines of Python that deploying, starting and cancelling a split of `branches` run;
    starting one whose branches all go straight on to their join, and one whose branches end
    one by one inside a subprocess; a signal that every branch of an instance waits for."""
    waiting, joined, scoped = f"waiting{branches}", f"joined{branches}", f"scoped{branches}"
    signalled = f"signalled{branches}"
    engine.deploy(
        straight_split(branches, key=joined),
        ending_in_a_subprocess(branches, key=scoped),
        waiting_for_a_signal(branches, key=signalled),
    )
    model = waiting_split(branches, key=waiting)
    started: list[Any] = []
    work = {
        "deploy": operations(lambda: engine.deploy(model)),
        "start": operations(lambda: started.append(engine.start_latest(waiting))),
        "cancel": operations(lambda: started[0].cancel()),
        "join": operations(lambda: started.append(engine.start_latest(joined))),
        "scope": operations(lambda: started.append(engine.start_latest(scoped))),
    }
    started.append(engine.start_latest(signalled))
    work["signal"] = operations(lambda: engine.signal(signalled))
    states = [handle.state.value for handle in started]
    assert states == ["Terminated", "Completed", "Completed", "Completed"]
    return work


@pytest.mark.slow
def test_commands_on_wide_instances_grow_linearly_with_the_branches(engine: Engine) -> None:
    """The Python each command runs (lines counted, as in tests/unit/test_parse_scaling.py) about
    doubles with twice the branches: no token, task, visit or join arrival is found by a scan of
    them all (each of these steps grew four times before)."""
    small, large = command_work(engine, 300), command_work(engine, 600)
    growth = {step: large[step] / small[step] for step in small}
    assert all(ratio < LINEAR for ratio in growth.values()), growth


@pytest.mark.slow
def test_a_split_of_5000_straight_branches_joins_once(database_url: str) -> None:
    model = straight_split(WIDE)
    with Engine(database_url, migrate=False, settings=settings_for(model, WIDE)) as engine:
        engine.deploy(model)
        instance = engine.start_latest("joined")
        assert instance.state.value == "Completed"
    tokens = rows(
        database_url,
        "SELECT node_id, state, merged_into IS NOT NULL, count(*) FROM token "
        "WHERE instance_id = %s GROUP BY 1, 2, 3",
        instance.id,
    )
    # The token that forked at the split; 4,999 branches merged into the last one to arrive,
    # which went on to the end.
    assert sorted(tokens) == [
        ("End", "Completed", False, 1),
        ("Join", "Completed", True, WIDE - 1),
        ("Split", "Completed", False, 1),
    ]
    ended_at = rows(
        database_url,
        "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = 'Join'",
        instance.id,
    )
    assert ended_at == [(WIDE,)]
    assert rows(database_url, "SELECT count(*) FROM join_state") == [(0,)]


def test_cancelling_branches_inside_subprocesses_retires_everything(database_url: str) -> None:
    """Each branch waits inside a subprocess of its own, with a timer on the subprocess's edge:
    cancelling ends every scope and everything inside it."""
    branches = 300
    builder = ProcessBuilder("scoped").start_event("Start").parallel_gateway("Split")
    builder.parallel_gateway("Join").end_event("End").chain("Start", "Split")
    builder.chain("Join", "End")
    timer = TimerDefinition(kind="duration", text="P1D")
    for n in range(branches):
        scope = f"Scope_{n}"
        builder.sub_process(scope).start_event(f"In_{n}", parent=scope)
        builder.user_task(f"Task_{n}", parent=scope).end_event(f"Out_{n}", parent=scope)
        builder.chain(f"In_{n}", f"Task_{n}", f"Out_{n}").chain("Split", scope, "Join")
        builder.boundary_event(f"Late_{n}", scope, timer=timer)
        builder.end_event(f"LateEnd_{n}").chain(f"Late_{n}", f"LateEnd_{n}")
    with Engine(database_url, migrate=False, settings=EngineSettings()) as engine:
        engine.deploy(builder.build())
        instance = engine.start_latest("scoped")
        assert len(instance.user_tasks()) == branches
        assert instance.cancel().value == "Terminated"
    live = rows(
        database_url,
        "SELECT count(*) FROM token WHERE instance_id = %s AND state NOT IN "
        "('Terminated', 'Completed')",
        instance.id,
    )
    assert live == [(0,)]
    terminated = rows(
        database_url,
        "SELECT count(*) FROM token WHERE instance_id = %s AND state = 'Terminated'",
        instance.id,
    )
    assert terminated == [(2 * branches,)]  # every scope token and the token inside it
    assert rows(
        database_url,
        "SELECT state, count(*) FROM user_task WHERE instance_id = %s GROUP BY state",
        instance.id,
    ) == [("Retired", branches)]
    assert rows(database_url, "SELECT count(*) FROM job WHERE instance_id = %s", instance.id) == [
        (0,)
    ]


def chain_file(tmp_path: Path, tasks: int) -> Path:
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'id="Defs" targetNamespace="http://bpmn.io/schema/bpmn">\n'
        '<bpmn:process id="long" isExecutable="true">\n<bpmn:startEvent id="Start"/>\n'
    ]
    previous = "Start"
    for n in range(tasks):
        parts.append(
            f'<bpmn:task id="T{n}"/>\n'
            f'<bpmn:sequenceFlow id="F{n}" sourceRef="{previous}" targetRef="T{n}"/>\n'
        )
        previous = f"T{n}"
    parts.append(
        '<bpmn:endEvent id="End"/>\n'
        f'<bpmn:sequenceFlow id="FEnd" sourceRef="{previous}" targetRef="End"/>\n'
        "</bpmn:process>\n</bpmn:definitions>\n"
    )
    path = tmp_path / "long.bpmn"
    path.write_text("".join(parts))
    return path


def line_of(path: Path, marker: str) -> int:
    text = path.read_text()
    return text[: text.index(marker)].count("\n") + 1


def test_deployments_beyond_the_limits_are_refused_and_write_nothing(
    database_url: str, tmp_path: Path
) -> None:
    long = chain_file(tmp_path, 10_000)  # with its start and end event, 10,002 nodes
    with Engine(database_url, migrate=False) as engine:
        engine.deploy(waiting_split(2, key="small"))
        before = counts(database_url)
        with pytest.raises(ModelError) as too_long:
            engine.deploy(long)
        with pytest.raises(ModelError) as too_wide:
            engine.deploy(waiting_split(1_001))
        assert counts(database_url) == before
    error = too_long.value
    assert (error.file, error.element_id) == ("long.bpmn", "T9999")
    assert error.line == line_of(long, '<bpmn:task id="T9999"/>')
    assert "long.bpmn, line" in error.message and "max_process_nodes" in error.message
    wide = too_wide.value
    assert (wide.file, wide.element_id) == ("wide.bpmn", "Split")
    assert wide.line is not None and "1001 outgoing sequence flows" in wide.message

    # Raised limits let both through, and a definition deployed under them starts in an engine
    # that has the default limits (a stored definition is read in full).
    raised = EngineSettings(max_process_nodes=10_002, max_fan_out=1_001)
    with Engine(database_url, migrate=False, settings=raised) as engine:
        engine.deploy(long, waiting_split(1_001))
    with Engine(database_url, migrate=False) as engine:
        assert engine.start_latest("long").state.value == "Completed"
        assert len(engine.start_latest("wide").user_tasks()) == 501


def test_the_http_api_refuses_a_deployment_beyond_the_limits(
    server: Any, database_url: str
) -> None:
    before = counts(database_url)
    content = write_bpmn([waiting_split(1_001)]).encode()
    response = httpx.post(
        f"{server.url}/api/v1/deployments",
        headers=server.bearer("admin"),
        files={"files": ("wide.bpmn", content)},
        timeout=60,
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "ModelError"
    assert body["detail"]["file"] == "wide.bpmn" and body["detail"]["element_id"] == "Split"
    assert body["detail"]["line"] > 1 and "max_fan_out" in body["message"]
    assert counts(database_url) == before
