"""Every command is one transaction: a failure leaves no changed row; a key makes it idempotent."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.commands.common import persist
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.handlers import TaskContext
from engine.errors import Conflict, HandlerError, InvariantViolation, InvariantViolationKind
from engine.states import InstanceState
from tests.engine.processes import approval, async_work, straight_through

TABLES = (
    "process_instance",
    "token",
    "join_state",
    "variable",
    "user_task",
    "history",
    "outbox",
    "idempotency",
)


def snapshot(database_url: str) -> dict[str, list[Any]]:
    """Every row of every runtime table, as text, for before/after comparison."""
    with psycopg.connect(database_url) as conn:
        return {
            table: sorted(str(row) for row in conn.execute(f"SELECT * FROM {table}").fetchall())
            for table in TABLES
        }


def test_handler_raising_mid_start_changes_nothing(engine: Engine, database_url: str) -> None:
    engine.register_handler("one", lambda ctx: {"one": 1})
    engine.register_handler("two", lambda ctx: {"two": 2})

    def explode(ctx: TaskContext) -> None:
        raise RuntimeError("card declined")

    engine.register_handler("three", explode)
    engine.deploy(straight_through())
    before = snapshot(database_url)
    with pytest.raises(HandlerError, match="card declined"):
        engine.start_latest("straight", {"amount": 10})
    assert snapshot(database_url) == before


def test_handler_raising_mid_continuation_changes_nothing(
    engine: Engine, database_url: str
) -> None:
    engine.register_handler("prepare", lambda ctx: {"prepared": True})

    def explode(ctx: TaskContext) -> None:
        ctx.set("half", "written")
        raise ValueError("ledger offline")

    engine.register_handler("book", explode)
    engine.deploy(approval())
    instance = engine.start_latest("approval", {"amount": 10})
    [task] = instance.user_tasks()
    before = snapshot(database_url)
    with pytest.raises(HandlerError, match="ledger offline"):
        engine.complete_task(task.id, {"approved": True})
    assert snapshot(database_url) == before
    assert instance.state is InstanceState.ACTIVE


def test_handler_side_effect_on_the_command_connection_rolls_back(
    engine: Engine, database_url: str
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ledger (entry text)")

    def book(ctx: TaskContext) -> None:
        ctx.connection.execute("INSERT INTO ledger VALUES ('booked')")

    def explode(ctx: TaskContext) -> None:
        raise RuntimeError("after the insert")

    engine.register_handler("one", book)
    engine.register_handler("two", explode)
    engine.register_handler("three", lambda ctx: None)
    engine.deploy(straight_through())
    with pytest.raises(HandlerError):
        engine.start_latest("straight")
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM ledger").fetchone() == (0,)


def test_same_idempotency_key_twice_has_one_effect(engine: Engine, database_url: str) -> None:
    engine.register_handler("prepare", lambda ctx: None)
    engine.deploy(approval())
    first = engine.start_latest("approval", {"amount": 1}, idempotency_key="order-42")
    second = engine.start_latest("approval", {"amount": 1}, idempotency_key="order-42")
    assert first.id == second.id
    assert engine.instance_counts() == {"Active": 1}
    [task] = first.user_tasks()
    done = engine.complete_task(task.id, {"approved": False}, idempotency_key="complete-1")
    again = engine.complete_task(task.id, {"approved": False}, idempotency_key="complete-1")
    assert done == again
    with pytest.raises(Conflict, match="already used"):
        engine.complete_task(task.id, idempotency_key="order-42")


def test_concurrent_commands_with_one_key_have_one_effect(engine: Engine) -> None:
    engine.register_handler("prepare", lambda ctx: None)
    engine.deploy(approval())
    for round_ in range(20):
        barrier = threading.Barrier(6)
        ids: list[str] = []

        def start(
            key: str = f"key-{round_}",
            barrier: threading.Barrier = barrier,
            ids: list[str] = ids,
        ) -> None:
            barrier.wait()
            ids.append(str(engine.start_latest("approval", idempotency_key=key).id))

        threads = [threading.Thread(target=start) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(ids) == 6 and len(set(ids)) == 1
    assert engine.instance_counts() == {"Active": 20}


def test_completed_token_cannot_execute_again(engine: Engine) -> None:
    engine.register_handler("work", lambda ctx: None)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    [token] = instance.tokens()
    engine.execute_token(token.token_id)
    with pytest.raises(InvariantViolation) as caught:
        engine.execute_token(token.token_id)
    assert caught.value.kind is InvariantViolationKind.TOKEN_INVALID_TRANSITION


def test_completing_a_finished_task_is_finalized_twice(engine: Engine) -> None:
    engine.register_handler("prepare", lambda ctx: None)
    engine.deploy(approval())
    instance = engine.start_latest("approval", {"amount": 1})
    [task] = instance.user_tasks()
    engine.complete_task(task.id, {"approved": False})
    with pytest.raises(InvariantViolation) as caught:
        engine.complete_task(task.id, {"approved": True})
    assert caught.value.kind is InvariantViolationKind.TOKEN_FINALIZED_TWICE


@dataclass(frozen=True)
class _TouchWaitingToken:
    """A command that loads an instance, lets another transaction change its token, then writes
    the token it loaded: the write must see that the row changed underneath it."""

    name: ClassVar[str] = "TouchWaitingToken"
    result_type: ClassVar[type[Result]] = Result

    instance_id: UUID
    database_url: str

    def execute(self, tx: Tx) -> Result:
        run = load(tx, self.instance_id)
        with psycopg.connect(self.database_url, autocommit=True) as other:
            other.execute(
                "UPDATE token SET version = version + 1 WHERE instance_id = %s",
                (self.instance_id,),
            )
        for token in run.tokens.values():
            token.updated_at, token.dirty = tx.now, True
        run.emit("token.touched")
        persist(tx, run)
        return Result()


def test_a_write_over_rows_changed_underneath_is_a_stale_write(
    engine: Engine, database_url: str
) -> None:
    engine.register_handler("prepare", lambda ctx: None)
    engine.deploy(approval())
    instance = engine.start_latest("approval", {"amount": 10})
    before = snapshot(database_url)
    with pytest.raises(InvariantViolation) as caught:
        engine.run(_TouchWaitingToken(instance.id, database_url))
    assert caught.value.kind is InvariantViolationKind.STALE_WRITE
    after = snapshot(database_url)
    # Only the other transaction's version bump is there; the command wrote nothing.
    assert after["outbox"] == before["outbox"] and after["history"] == before["history"]
    assert after["token"] != before["token"]
