"""The soak's checks (bench/chaos.py) find what they look for: on instances run to the end they
count nothing; each planted fault (a doubled visit, a timer or join twice, an outbox row out of
order, an instance started twice, a start answered but never made) is counted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from bench.chaos import KEY, TOPIC, Figures, check, model
from engine.api import Engine
from engine.loops.jobs import JobExecutor
from engine.loops.worker import Task, Worker
from engine.states import InstanceState

KEYS = ["soak-a", "soak-b"]


@pytest.fixture
def finished(database_url: str) -> Iterator[tuple[Engine, list[Any]]]:
    """Two instances of the soak's process, run to the end in this process."""
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        engine.deploy(model())
        instances = [engine.start_latest(KEY, business_key=key) for key in KEYS]
        worker = Worker(engine, long_poll_seconds=0)

        @worker.topic(TOPIC)
        def work(task: Task) -> dict[str, bool]:
            return {"worked": True}

        executor = JobExecutor(engine, poll_interval=0.2)
        deadline = time.monotonic() + 30
        while any(i.state is not InstanceState.COMPLETED for i in instances):
            assert time.monotonic() < deadline, "the soak's process did not complete"
            worker.run_once()
            executor.run_once()
            time.sleep(0.1)
        yield engine, instances


def figures_of(conn: psycopg.Connection[Any], answered: list[str] = KEYS) -> Figures:
    figures = Figures()
    check(conn, answered, figures)
    return figures


def test_a_clean_run_counts_nothing(finished: tuple[Engine, list[Any]], database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        figures = figures_of(conn)
    assert (figures.instances, figures.completed, figures.stuck) == (2, 2, 0)
    assert figures.doubled == {
        "instances per start": 0,
        "history visits (token, node)": 0,
        "timers fired": 0,
        "joins left": 0,
        "external tasks completed": 0,
        "instances ended": 0,
    }
    assert figures.out_of_order == 0


def planted(conn: psycopg.Connection[Any], sql: str, *params: object) -> Figures:
    """The figures with one fault planted, rolled back afterwards."""
    with conn.transaction(force_rollback=True):
        conn.execute(sql, params)
        return figures_of(conn)


DOUBLE_VISIT = """
INSERT INTO history (id, instance_id, token_id, node_id, node_name, node_type, state,
                     started_at, ended_at, mode, called_instance_id)
SELECT gen_random_uuid(), instance_id, token_id, node_id, node_name, node_type, state,
       started_at, ended_at, mode, called_instance_id
FROM history WHERE instance_id = %s AND node_id = 'wait'
"""
AGAIN = """
INSERT INTO outbox (instance_id, events)
SELECT instance_id, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('event', event,
    'token_id', token_id, 'node_id', node_id, 'history_id', history_id))) FROM outbox_event
WHERE instance_id = %s AND event = %s AND node_id IS NOT DISTINCT FROM %s
"""


def test_each_planted_fault_is_counted(
    finished: tuple[Engine, list[Any]], database_url: str
) -> None:
    engine, (first, _) = finished
    with psycopg.connect(database_url, autocommit=True) as conn:
        figures = planted(conn, DOUBLE_VISIT, first.id)
        assert figures.doubled["history visits (token, node)"] == 1
        assert figures.doubled_total == 1

        figures = planted(conn, AGAIN, first.id, "job.executed", "wait")
        assert figures.doubled["timers fired"] == 1
        assert figures.out_of_order == 1  # the completion is no longer in the last transaction

        figures = planted(conn, AGAIN, first.id, "token.merged", "join")
        assert figures.doubled["joins left"] == 1

        figures = planted(conn, AGAIN, first.id, "external_task.completed", "work")
        assert figures.doubled["external tasks completed"] == 1

        # The start's row moved after the completion: out of order, nothing doubled.
        figures = planted(
            conn,
            "UPDATE outbox SET seq = (SELECT max(seq) + 1 FROM outbox) WHERE seq = "
            "(SELECT row_seq FROM outbox_event WHERE instance_id = %s "
            "AND event = 'instance.started')",
            first.id,
        )
        assert (figures.out_of_order, figures.doubled_total) == (1, 0)

        # A start answered 201 whose instance is nowhere is stuck.
        assert figures_of(conn, [*KEYS, "soak-missing"]).stuck == 1

        # A business key started twice: doubled, and the second instance is stuck.
        engine.start_latest(KEY, business_key=KEYS[0])
        figures = figures_of(conn)
        assert figures.doubled["instances per start"] == 1
        assert (figures.instances, figures.completed, figures.stuck) == (3, 2, 1)
