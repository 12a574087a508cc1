"""Rows for the console's lists, written straight into the engine's tables with generate_series:
instances of one definition started a second apart, some with an open incident or an open user
task, and a few business keys a spreadsheet would read as formulas."""

from __future__ import annotations

from engine.api import Engine
from engine.builder import ProcessBuilder

KEY = "export-list"
# Business keys of the five newest instances (n = 1..5), as sent.
TRICKY_KEYS = ("=1+2", "+SUM(A1:A9)", "-3", "@cmd", 'says "hi", then\nleaves')


def fill(engine: Engine, completed: int, active: int = 0) -> None:
    """`completed` Completed instances (n = 1..completed, n seconds old) and `active` Active ones
    after them; every 50th has an open incident, every 40th an open user task, assigned to
    `viewer` for every 80th."""
    engine.deploy(
        ProcessBuilder(KEY)
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )
    definition = engine.latest_definition(KEY)
    with engine.connection() as conn, conn.transaction():
        conn.execute(
            "INSERT INTO process_instance (id, root_instance_id, definition_id, definition_key, "
            "business_key, state, version, started_at, ended_at) "
            "SELECT u, u, %(id)s, %(key)s, 'order-' || n, "
            "CASE WHEN n <= %(completed)s THEN 'Completed' ELSE 'Active' END, 0, "
            "now() - n * interval '1 second', "
            "CASE WHEN n <= %(completed)s THEN now() END "
            "FROM (SELECT gen_random_uuid() AS u, n FROM generate_series(1, %(total)s) n) AS ids",
            {
                "id": definition.id,
                "key": KEY,
                "completed": completed,
                "total": completed + active,
            },
        )
        conn.execute(
            "INSERT INTO incident (id, type, instance_id, definition_id, node_id, message, state, "
            "created_at) SELECT gen_random_uuid(), 'failedJob', id, definition_id, 't', "
            "CASE WHEN business_key = 'order-50' THEN '=HYPERLINK(\"http://x\")' "
            "ELSE 'boom ' || business_key END, 'Open', started_at + interval '1 ms' "
            "FROM process_instance WHERE substr(business_key, 7)::int % 50 = 0",
        )
        conn.execute(
            "INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, assignee, "
            "created_at) SELECT gen_random_uuid(), id, gen_random_uuid(), 't', 'Review', 'Open', "
            "CASE WHEN substr(business_key, 7)::int % 80 = 0 THEN 'viewer' END, "
            "started_at + interval '1 ms' "
            "FROM process_instance WHERE substr(business_key, 7)::int % 40 = 0",
        )
        for n, key in enumerate(TRICKY_KEYS, start=1):
            conn.execute(
                "UPDATE process_instance SET business_key = %s WHERE business_key = %s",
                (key, f"order-{n}"),
            )
        conn.execute("ANALYZE process_instance")
