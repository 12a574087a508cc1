"""The migration that adds process_definition.diagram_xml generates the diagram of every
definition deployed before it without a layout of its own."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg

from engine.bpmn import write_bpmn
from engine.bpmn.diagram import generated_diagram
from engine.builder import ProcessBuilder
from engine.db import migrate

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_definitions_deployed_before_get_their_generated_diagram(empty_database_url: str) -> None:
    migrate.upgrade(empty_database_url, "0015")
    bare = write_bpmn(
        [
            ProcessBuilder("bare")
            .start_event("S")
            .task("T")
            .end_event("E")
            .chain("S", "T", "E")
            .build()
        ]
    )
    drawn = (DATA / "invoice_approval.bpmn").read_text()
    broken = "<definitions>not BPMN</definitions>"
    deployment = uuid.uuid4()
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO deployment (id, name, source) VALUES (%s, 'old', 'test')", (deployment,)
        )
        for key, xml in (("bare", bare), ("invoice_approval", drawn), ("broken", broken)):
            conn.execute(
                "INSERT INTO process_definition (id, key, version, deployment_id, resource_name, "
                "source_xml, content_hash) VALUES (%s, %s, 1, %s, %s, %s, '')",
                (f"{key}:1:x", key, deployment, f"{key}.bpmn", xml),
            )

    migrate.upgrade(empty_database_url)

    with psycopg.connect(empty_database_url) as conn:
        rows: dict[str, str | None] = dict(
            conn.execute("SELECT key, diagram_xml FROM process_definition ORDER BY key").fetchall()
        )
        sources = [
            r[0] for r in conn.execute("SELECT source_xml FROM process_definition ORDER BY key")
        ]
    assert rows == {
        "bare": generated_diagram(bare, "bare.bpmn", first="bare"),
        "broken": None,
        "invoice_approval": None,
    }
    assert rows["bare"] is not None and "BPMNShape" in rows["bare"]
    assert sources == [bare, broken, drawn]
