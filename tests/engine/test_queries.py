"""engine.queries: a read called with the engine borrows a pooled read connection for the call;
called with a connection it runs on that one, inside the caller's transaction."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.identity.accounts import Role, hash_password
from engine.queries import accounts, console
from engine.queries import instances as instance_reads
from engine.queries.camunda import instances as camunda_instances
from engine.queries.camunda import tasks as task_reads
from engine.queries.camunda.common import CamundaPage
from engine.store import accounts as account_store
from tests.engine.processes import fan_out


class Rollback(Exception):
    pass


def test_a_query_called_with_the_engine_returns_rows_built_by_name(engine: Engine) -> None:
    engine.deploy(fan_out(2, "fan"))
    started = [engine.start_latest("fan", business_key=f"order-{n}") for n in range(3)]
    # More calls than the pool has connections: each call gives its connection back.
    for _ in range(engine.pool.max_size + 2):
        assert console.definition_keys(engine) == ["fan"]
    rows = task_reads.user_tasks(engine, CamundaPage(sort=(("taskDefinitionKey", True),)))
    assert isinstance(rows, list)
    assert [(r.node_id, r.definition_key, r.instance_state) for r in rows[:3]] == [
        ("task_1", "fan", "Active")
    ] * 3
    assert {r.instance_id for r in rows} == {h.id for h in started}
    assert task_reads.user_tasks(engine, CamundaPage(), count=True) == 6
    page = camunda_instances.process_instances(
        engine, CamundaPage(first=1, max=1, sort=(("businessKey", True),))
    )
    assert isinstance(page, list)
    assert [(r.business_key, r.state) for r in page] == [("order-1", "Active")]
    info = instance_reads.instance(engine, started[0].id)
    assert info is not None and info.business_key == "order-0"


def test_a_query_called_with_a_connection_runs_in_the_callers_transaction(engine: Engine) -> None:
    with pytest.raises(Rollback), engine.connection() as conn, conn.transaction():
        secret = hash_password("a-long-password")
        assert account_store.insert_credential(conn, "erin", "token", secret, group_id="viewer")
        assert accounts.count(conn) == 1
        assert accounts.count(engine) == 0  # another connection: not committed yet
        raise Rollback
    assert accounts.count(engine) == 0
    engine.run(CreateUser("erin", Role.VIEWER, "a-long-password"))
    assert accounts.count(engine) == 1
    assert accounts.verify_password(engine, "erin", "a-long-password") is not None
