"""A user sees the rows of their tenants (their own memberships and their groups') and those of
no tenant: definitions, instances, historic instances and tasks, in lists and counts alike."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import psycopg
import pytest

from engine.api import Engine
from engine.core import actors
from engine.errors import BadRequest
from engine.queries import definitions as definition_reads
from engine.queries import grants as grant_reads
from engine.queries.camunda import external_tasks as external_task_reads
from engine.queries.camunda import instances as instance_reads
from engine.queries.camunda import tasks as task_reads
from engine.queries.camunda.common import CamundaPage
from engine.states import AuditChannel
from tests.compat.processes import approval, external_then_review


def _members(url: str) -> None:
    """ann belongs to tenant-a herself and to tenant-b through the group clerks; bob to none."""
    with psycopg.connect(url, autocommit=True) as conn:
        for tenant in ("tenant-a", "tenant-b", "tenant-c"):
            conn.execute("INSERT INTO tenant (id, name) VALUES (%s, %s)", (tenant, tenant))
        for user in ("ann", "bob"):
            conn.execute("INSERT INTO identity_user (id) VALUES (%s)", (user,))
        conn.execute("INSERT INTO identity_group (id, name) VALUES ('clerks', 'Clerks')")
        conn.execute("INSERT INTO group_membership (group_id, user_id) VALUES ('clerks', 'ann')")
        conn.execute(
            "INSERT INTO tenant_membership (id, tenant_id, user_id) VALUES (%s, 'tenant-a', 'ann')",
            (uuid.uuid4(),),
        )
        conn.execute(
            "INSERT INTO tenant_membership (id, tenant_id, group_id) "
            "VALUES (%s, 'tenant-b', 'clerks')",
            (uuid.uuid4(),),
        )


def test_a_user_sees_their_tenants_rows_and_those_of_none(
    engine: Engine, database_url: str
) -> None:
    _members(database_url)
    xml = approval("approval")
    started: dict[str | None, str] = {}
    for tenant in ("tenant-a", "tenant-b", "tenant-c", None):
        engine.deploy(xml, tenant_id=tenant)
        started[tenant] = str(
            engine.start_latest("approval", tenant_id=tenant, without_tenant=tenant is None).id
        )
    # A request reads the tenants with the grants, in one statement.
    ann_access = grant_reads.access(engine, "ann")
    assert ann_access.tenant_ids == {"tenant-a", "tenant-b"}
    assert ann_access.grants.group_ids == {"clerks"}
    assert grant_reads.access(engine, "bob").tenant_ids == frozenset()

    def seen(tenant_ids: frozenset[str] | None) -> tuple[list[str | None], ...]:
        actor = actors.Actor("someone", AuditChannel.API, tenant_ids=tenant_ids)
        with actors.acting(actor):
            definitions = [row.tenant_id for row in definition_reads.list_all(engine, "approval")]
            running = instance_reads.process_instances(engine, CamundaPage())
            history = instance_reads.historic_instances(engine, CamundaPage())
            tasks = task_reads.user_tasks(engine, CamundaPage())
            counted = task_reads.user_tasks(engine, CamundaPage(), count=True)
        assert isinstance(running, list) and isinstance(history, list)
        assert isinstance(tasks, list) and counted == len(tasks)
        by_id = {value: key for key, value in started.items()}
        return (
            sorted(definitions, key=str),
            sorted((by_id[str(row.id)] for row in running), key=str),
            sorted((by_id[str(row.id)] for row in history), key=str),
            sorted((by_id[str(row.instance_id)] for row in tasks), key=str),
        )

    assert seen(ann_access.tenant_ids) == ([None, "tenant-a", "tenant-b"],) * 4
    assert seen(frozenset()) == ([None],) * 4
    everything = [None, "tenant-a", "tenant-b", "tenant-c"]
    assert seen(None) == (everything,) * 4


def test_a_key_alone_starts_the_definition_of_the_callers_one_tenant(engine: Engine) -> None:
    for tenant in ("tenant-a", "tenant-b"):
        engine.deploy(approval("solo"), tenant_id=tenant)
    with actors.acting(actors.Actor("ann", AuditChannel.API, tenant_ids=frozenset({"tenant-b"}))):
        started = engine.start_latest("solo").info()
    assert started.tenant_id == "tenant-b"
    with (
        actors.acting(actors.Actor("root", AuditChannel.API)),
        pytest.raises(BadRequest) as refused,
    ):
        engine.start_latest("solo")
    assert refused.value.message == (
        "Cannot resolve a unique process definition for key 'solo' because it exists for "
        "multiple tenants."
    )


def test_a_user_sees_their_tenants_external_tasks_and_those_of_none(engine: Engine) -> None:
    xml = external_then_review("order", "charge")
    for tenant in ("tenant-a", "tenant-c", None):
        engine.deploy(xml, tenant_id=tenant)
        engine.start_latest("order", tenant_id=tenant, without_tenant=tenant is None)
    now = datetime.now(UTC)

    def seen(tenant_ids: frozenset[str] | None) -> list[str | None]:
        with actors.acting(actors.Actor("someone", AuditChannel.API, tenant_ids=tenant_ids)):
            rows = external_task_reads.external_tasks(engine, CamundaPage(), now)
        assert isinstance(rows, list)
        return sorted((row.tenant_id for row in rows), key=str)

    assert seen(frozenset({"tenant-a"})) == [None, "tenant-a"]
    assert seen(None) == [None, "tenant-a", "tenant-c"]
