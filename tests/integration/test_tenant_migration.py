"""The migration that brings tenants: definitions deployed before it keep no tenant, still start
by key, and keep counting their versions; a tenant's first deployment of the same key is its
version 1."""

from __future__ import annotations

import hashlib
import uuid

import psycopg

from engine.api import Engine
from engine.db import migrate
from tests.compat.processes import external_only


def test_rows_from_before_keep_no_tenant_and_still_start(empty_database_url: str) -> None:
    migrate.upgrade(empty_database_url, "0026")
    xml = external_only("legacy", "legacy-work")
    deployment = uuid.uuid4()
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO deployment (id, name, source) VALUES (%s, 'old', 'test')", (deployment,)
        )
        conn.execute(
            "INSERT INTO process_definition (id, key, version, deployment_id, resource_name, "
            "source_xml, content_hash) VALUES ('legacy:1:x', 'legacy', 1, %s, 'legacy.bpmn', "
            "%s, %s)",
            (deployment, xml, hashlib.sha256(b"old").hexdigest()),
        )

    migrate.upgrade(empty_database_url)

    with Engine(empty_database_url, migrate=False) as engine:
        started = engine.start_latest("legacy")
        again = engine.deploy(xml.replace("External work", "Renamed"))
        tenant = engine.deploy(xml, tenant_id="acme")
        by_key = engine.start_latest("legacy", without_tenant=True).info()
    with psycopg.connect(empty_database_url) as conn:
        rows = conn.execute(
            "SELECT d.id, d.tenant_id, p.tenant_id, e.tenant_id, dep.tenant_id "
            "FROM process_instance p JOIN process_definition d ON d.id = p.definition_id "
            "JOIN external_task e ON e.instance_id = p.id "
            "JOIN deployment dep ON dep.id = d.deployment_id WHERE p.id = %s",
            (started.id,),
        ).fetchall()
        versions = conn.execute(
            "SELECT key, version, tenant_id FROM process_definition ORDER BY tenant_id NULLS "
            "FIRST, version"
        ).fetchall()
    assert rows == [("legacy:1:x", None, None, None, None)]
    assert [(d["version"], d["tenant_id"]) for d in again.definitions] == [(2, None)]
    assert [(d["version"], d["tenant_id"]) for d in tenant.definitions] == [(1, "acme")]
    assert versions == [("legacy", 1, None), ("legacy", 2, None), ("legacy", 1, "acme")]
    assert by_key.definition_id == again.definitions[0]["id"]
