"""Deleting a deployment (engine/commands/deployments.py `DeleteDeployment`): refused while its
definitions have instances unless cascading; a cascade deletes its instances with the instances
they called and every row of theirs in one transaction, and is refused for an instance called
from a family rooted in another deployment."""

from __future__ import annotations

from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.deployments import DeleteDeployment, DeploymentInUse
from engine.errors import Conflict, NotFound
from engine.model import ProcessModel
from engine.store.cleanup import DEPENDENTS


def worker(key: str) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("Start")
        .user_task("Work", "Work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build()
    )


def caller(key: str, called: str) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("Start")
        .call_activity("Call", called_element=called)
        .end_event("End")
        .chain("Start", "Call", "End")
        .build()
    )


def rows_of(database_url: str, instances: list[UUID]) -> dict[str, int]:
    """How many rows each table holding instance rows keeps for `instances`."""
    counts: dict[str, int] = {}
    with psycopg.connect(database_url) as conn:
        for table in (*DEPENDENTS, "process_instance"):
            column = "id" if table == "process_instance" else "instance_id"
            found = conn.execute(
                f"SELECT count(*) FROM {table} WHERE {column} = ANY(%s)", (instances,)
            ).fetchone()
            assert found is not None
            if found[0]:
                counts[table] = int(found[0])
    return counts


def test_cascade_deletes_the_families_and_refuses_otherwise(
    engine: Engine, database_url: str
) -> None:
    called = engine.deploy(worker("child"), name="called")
    calling = engine.deploy(caller("parent", "child"), name="calling")
    assert called.deployment_id and calling.deployment_id
    parent = engine.start_latest("parent")
    [child] = parent.children()
    family = [parent.id, child.id]
    assert rows_of(database_url, family)["user_task"] == 1

    # The called deployment: its instance runs, and was called from another deployment's.
    with pytest.raises(DeploymentInUse, match="without cascading failed"):
        engine.run(DeleteDeployment(UUID(called.deployment_id)))
    with pytest.raises(Conflict, match="was called by the family"):
        engine.run(DeleteDeployment(UUID(called.deployment_id), cascade=True))

    # The calling deployment: its instance and the instance it called go, with every row.
    result = engine.run(DeleteDeployment(UUID(calling.deployment_id), cascade=True))
    assert result.instances == 2
    assert rows_of(database_url, family) == {}
    # The called definition stays; with no instance left it goes without cascade.
    engine.run(DeleteDeployment(UUID(called.deployment_id)))
    with pytest.raises(NotFound):
        engine.run(DeleteDeployment(UUID(called.deployment_id)))


def test_ended_instances_keep_their_deployment_unless_cascading(
    engine: Engine, database_url: str
) -> None:
    deployed = engine.deploy(worker("short"), name="short")
    assert deployed.deployment_id
    instance = engine.start_latest("short")
    [task] = engine.user_tasks(instance.id)
    engine.complete_task(task.id)
    with pytest.raises(DeploymentInUse, match="history of 1 ended instances"):
        engine.run(DeleteDeployment(UUID(deployed.deployment_id)))
    assert rows_of(database_url, [instance.id])["history"] > 0
    engine.run(DeleteDeployment(UUID(deployed.deployment_id), cascade=True))
    assert rows_of(database_url, [instance.id]) == {}
    with psycopg.connect(database_url) as conn:
        left = conn.execute(
            "SELECT (SELECT count(*) FROM deployment), (SELECT count(*) FROM deployment_resource),"
            " (SELECT count(*) FROM process_definition)"
        ).fetchone()
    assert left == (0, 0, 0)
