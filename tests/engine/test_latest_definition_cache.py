"""A start by key alone takes the latest definition it remembered, without looking the key up;
its write statement checks the definition still is the key's latest, active, of the key's only
tenant. Another engine on the same database (its own cache) deploys, suspends and deletes
meanwhile: every start still takes what a look-up would have given."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.deployments import DeleteDeployment
from engine.commands.suspension import ActivateDefinition, SuspendDefinition
from engine.errors import BadRequest, ExpressionError, Suspended
from engine.model import ProcessModel


def model(task: str) -> ProcessModel:
    return (
        ProcessBuilder("cached")
        .start_event("start")
        .user_task(task)
        .end_event("end")
        .chain("start", task, "end")
        .build()
    )


@pytest.fixture
def other(database_url: str) -> Iterator[Engine]:
    """A second engine on the same database: its deployments never touch the first's cache."""
    with Engine(database_url, migrate=False, pool_size=2) as engine:
        yield engine


def statements(engine: Engine, **start: Any) -> tuple[str, list[str]]:
    """Start by key; the instance's definition id and the statements the start sent."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, str) else repr(query))
        return execute(self, query, params, **kwargs)

    psycopg.Cursor.execute = recording  # type: ignore[method-assign]
    try:
        result = engine.start_latest("cached", **start)
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    return definition_of(engine, result.id), sent


def looked_up(sent: list[str]) -> bool:
    return any("DISTINCT ON (tenant_id)" in text for text in sent)


def definition_of(engine: Engine, instance_id: UUID | str) -> str:
    with psycopg.connect(engine.database.url) as conn:
        row = conn.execute(
            "SELECT definition_id FROM process_instance WHERE id = %s", (UUID(str(instance_id)),)
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_a_remembered_latest_definition_is_started_without_a_look_up(
    engine: Engine, other: Engine
) -> None:
    other.deploy(model("first"))
    v1, sent = statements(engine)
    assert looked_up(sent)
    again, sent = statements(engine)
    assert again == v1 and not looked_up(sent)

    # A newer version deployed elsewhere: the write statement finds the remembered one is no
    # longer the latest, the start runs again with a look-up and takes the new version.
    v2 = other.deploy(model("second")).definitions[0]["id"]
    assert v2 != v1
    started, sent = statements(engine)
    assert started == v2 and looked_up(sent)
    result = engine.start_latest("cached")
    assert definition_of(engine, result.id) == v2

    # Suspended elsewhere: refused as a look-up would refuse it, and nothing is written.
    with psycopg.connect(engine.database.url) as conn:
        before = conn.execute("SELECT count(*) FROM process_instance").fetchone()
    other.run(SuspendDefinition(definition_id=v2))
    with pytest.raises(Suspended):
        engine.start_latest("cached")
    with psycopg.connect(engine.database.url) as conn:
        assert conn.execute("SELECT count(*) FROM process_instance").fetchone() == before
    other.run(ActivateDefinition(definition_id=v2))
    assert definition_of(engine, engine.start_latest("cached").id) == v2


def test_a_deleted_latest_version_gives_way_to_the_one_before(
    engine: Engine, other: Engine
) -> None:
    v1 = other.deploy(model("first")).definitions[0]["id"]
    deployment = other.deploy(model("second"))
    v2 = deployment.definitions[0]["id"]
    assert definition_of(engine, engine.start_latest("cached").id) == v2
    assert deployment.deployment_id is not None
    other.run(DeleteDeployment(UUID(deployment.deployment_id), cascade=True))
    started, sent = statements(engine)
    assert started == v1 and looked_up(sent)


def test_the_key_deployed_for_a_tenant_too_makes_a_start_by_key_ambiguous(
    engine: Engine, other: Engine
) -> None:
    other.deploy(model("first"))
    engine.start_latest("cached")
    other.deploy(model("first"), tenant_id="tenant-one")
    with pytest.raises(BadRequest, match="multiple tenants"):
        engine.start_latest("cached")
    # Named tenants still start their own.
    started = engine.start_latest("cached", tenant_id="tenant-one")
    assert definition_of(engine, started.id) != ""


def test_a_start_that_fails_on_a_remembered_definition_is_run_again_with_a_look_up(
    engine: Engine, other: Engine
) -> None:
    """The remembered version fails before its write is reached (its condition reads a variable
    nobody set); the newer one deployed elsewhere meanwhile would not: the start takes it."""
    other.deploy(
        ProcessBuilder("cached")
        .start_event("start")
        .exclusive_gateway("split")
        .user_task("first")
        .end_event("end")
        .flow("start", "split")
        .flow("split", "first", condition="${missing > 1}")
        .chain("first", "end")
        .build()
    )
    with pytest.raises(ExpressionError):
        engine.start_latest("cached")
    assert engine.start_latest("cached", {"missing": 2}) is not None  # remembered now
    newest = other.deploy(model("second")).definitions[0]["id"]
    started, sent = statements(engine)
    assert started == newest and looked_up(sent)
