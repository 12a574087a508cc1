"""One outbox row per command and instance: its events in the order the command wrote them, read
one by one through the view outbox_event, numbered row seq x 1000 + place."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.runtime import Event
from engine.store.persist import outbox_rows
from tests.engine.processes import straight_through


def rows(engine: Engine, instance_id: UUID) -> list[tuple[Any, ...]]:
    with psycopg.connect(engine.database.url) as conn:
        return conn.execute(
            "SELECT seq, jsonb_array_length(events) FROM outbox WHERE instance_id = %s "
            "ORDER BY seq",
            (instance_id,),
        ).fetchall()


def events(engine: Engine, instance_id: UUID) -> list[tuple[Any, ...]]:
    with psycopg.connect(engine.database.url) as conn:
        return conn.execute(
            "SELECT seq, row_seq, event, node_id FROM outbox_event WHERE instance_id = %s "
            "ORDER BY seq",
            (instance_id,),
        ).fetchall()


def test_a_straight_through_instance_writes_one_row_of_its_events_in_order(
    engine: Engine,
) -> None:
    for name in ("one", "two", "three"):
        engine.register_handler(name, lambda ctx: None)
    engine.deploy(straight_through())
    instance = engine.start_latest("straight", {"n": 1})

    [(row_seq, count)] = rows(engine, instance.id)
    found = events(engine, instance.id)
    assert count == len(found) == 8
    assert [seq for seq, *_ in found] == [row_seq * 1000 + place for place in range(8)]
    assert {row for _, row, *_ in found} == {row_seq}
    assert [(event, node) for _, _, event, node in found] == [
        ("visit.completed", "start"),
        ("visit.completed", "one"),
        ("visit.completed", "two"),
        ("visit.completed", "three"),
        ("visit.completed", "end"),
        ("instance.started", None),
        ("instance.completed", None),
        ("variables.updated", None),
    ]


def test_a_command_of_more_than_a_thousand_events_takes_further_rows(engine: Engine) -> None:
    # 1,100 parallel user tasks: each item's visit opens at the start, over a thousand events
    # in one command.
    engine.deploy(
        ProcessBuilder("wide")
        .start_event("start")
        .user_task("review")
        .multi_instance("review", cardinality=1100)
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )
    instance = engine.start_latest("wide")

    counts = [count for _, count in rows(engine, instance.id)]
    assert len(counts) >= 2 and all(count <= 1000 for count in counts)
    assert counts[:-1] == [1000] * (len(counts) - 1)
    found = events(engine, instance.id)
    assert len(found) == sum(counts) > 1000
    numbers = [seq for seq, *_ in found]
    assert numbers == sorted(set(numbers))
    first_row = found[0][1]
    assert all(seq // 1000 == row for seq, row, *_ in found)
    assert found[999][1] == first_row and found[1000][1] > first_row


def test_rows_of_events_are_split_at_a_thousand_and_leave_out_unset_fields() -> None:
    many = [Event("visit.started", node_id=f"n{n}") for n in range(2500)]
    split = outbox_rows(many, "i", "key")
    assert [len(row["events"]) for row in split] == [1000, 1000, 500]
    assert [row["ordinality"] for row in split] == [0, 1, 2]
    assert split[2]["events"][-1] == {"event": "visit.started", "node_id": "n2499"}
    assert {(row["instance_id"], row["definition_key"]) for row in split} == {("i", "key")}
    assert outbox_rows([], "i", "key") == []
