"""Ended (and running) instances in bulk for the history cleanup tests, written with
generate_series straight into the engine's tables, and the checks that a cleanup deleted exactly
the families past their time to live, each one wholly.

Instance `i` (1..n) is in the group `i % 20` (its business key, `g<group>:<i>`):

  group         definition  root                          called instance   after a cleanup
  0-9           short (30)  ended 40 days ago             -                 gone
  10            short (30)  ended 10 days ago             -                 kept
  11            short (30)  Active                        ended 60 days ago kept (root runs)
  12            short (30)  ended 40 days ago             ended 41 days ago gone, both
  13            short (30)  ended 40 days ago             Active            kept (family runs)
  14, 15        default     ended 90 days ago             -                 gone (default 60)
  16, 17        default     ended 40 days ago             -                 kept
  18            short (30)  ended 29 days ago             -                 kept
  19            short (30)  Active, started 100 days ago  -                 kept

Every instance has 3 visits, 2 variables, 2 tokens and a resolved incident; every tenth a user
task; every called instance a visit and a variable of its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder

GONE_GROUPS = frozenset({*range(10), 12, 14, 15})
# The tables every instance has rows in (the test pins them here).
ROW_TABLES = ("history", "variable", "token", "incident")
EXPECTED_ROWS = {"history": 3, "variable": 2, "token": 2, "incident": 1}


def deploy(engine: Engine) -> dict[str, str]:
    """Definitions short (camunda:historyTimeToLive 30 days) and default (none: the setting
    applies; the tests set 60 days); their ids by name."""
    ids: dict[str, str] = {}
    for name, ttl in (("short", 30), ("default", None)):
        model = (
            ProcessBuilder(f"retained-{name}", history_ttl_days=ttl)
            .start_event("start")
            .user_task("review")
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
        deployed = engine.deploy(model).definitions[0]
        ids[name] = deployed["id"]
    return ids


_INSERT = """
WITH n AS (
    SELECT i, i %% 20 AS g FROM generate_series(1, %(n)s) AS i
)
INSERT INTO process_instance (id, definition_id, definition_key, business_key, state, version,
    started_at, ended_at, super_instance_id, super_token_id, root_instance_id)
SELECT md5('root' || i)::uuid,
       CASE WHEN g IN (14, 15, 16, 17) THEN %(default)s ELSE %(short)s END,
       CASE WHEN g IN (14, 15, 16, 17) THEN 'retained-default' ELSE 'retained-short' END,
       'g' || g || ':' || i,
       CASE WHEN g IN (11, 19) THEN 'Active' WHEN i %% 2 = 0 THEN 'Completed'
            ELSE 'Terminated' END,
       3,
       %(now)s - interval '500 days',
       CASE WHEN g IN (11, 19) THEN NULL
            WHEN g = 10 THEN %(now)s - interval '10 days'
            WHEN g IN (14, 15) THEN %(now)s - interval '90 days'
            WHEN g = 18 THEN %(now)s - interval '29 days'
            ELSE %(now)s - interval '40 days' END,
       NULL, NULL, md5('root' || i)::uuid
FROM n
UNION ALL
SELECT md5('child' || i)::uuid, %(short)s, 'retained-short', 'g' || g || ':' || i || ':child',
       CASE WHEN g = 13 THEN 'Active' ELSE 'Completed' END, 2,
       %(now)s - interval '499 days',
       CASE WHEN g = 13 THEN NULL WHEN g = 12 THEN %(now)s - interval '41 days'
            ELSE %(now)s - interval '60 days' END,
       md5('root' || i)::uuid, md5('calltoken' || i)::uuid, md5('root' || i)::uuid
FROM n WHERE g IN (11, 12, 13)
"""

_ROWS = """
WITH p AS (SELECT id, definition_id, started_at, coalesce(ended_at, started_at) AS ended_at
           FROM process_instance WHERE business_key LIKE 'g%' AND super_instance_id IS NULL),
h AS (
    INSERT INTO history (id, instance_id, token_id, node_id, node_name, node_type, state,
                         started_at, ended_at)
    SELECT md5(p.id::text || 'visit' || k)::uuid, p.id, md5(p.id::text || 'token' || k)::uuid,
           (ARRAY['start', 'review', 'end'])[k], NULL, 'userTask', 'Completed', p.started_at,
           p.ended_at
    FROM p, generate_series(1, 3) AS k
),
v AS (
    INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at)
    SELECT p.id, '', 'v' || k, 'Integer', to_jsonb(k), p.started_at
    FROM p, generate_series(1, 2) AS k
),
t AS (
    INSERT INTO token (id, instance_id, node_id, state, mode, version, created_at, updated_at)
    SELECT md5(p.id::text || 'token' || k)::uuid, p.id, 'end', 'Completed', 'Forward', 1,
           p.started_at, p.ended_at
    FROM p, generate_series(1, 2) AS k
),
u AS (
    INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, created_at, ended_at)
    SELECT md5(p.id::text || 'task')::uuid, p.id, md5(p.id::text || 'token1')::uuid, 'review',
           'Review', 'Completed', p.started_at, p.ended_at
    FROM p WHERE get_byte(decode(replace(p.id::text, '-', ''), 'hex'), 0) % 10 = 0
)
INSERT INTO incident (id, type, instance_id, definition_id, node_id, message, state,
                      created_at, resolved_at)
SELECT md5(p.id::text || 'incident')::uuid, 'failedJob', p.id, p.definition_id, 'review',
       'it failed once', 'Resolved', p.started_at, p.ended_at
FROM p
"""

_CHILD_ROWS = """
WITH c AS (SELECT id, started_at FROM process_instance
           WHERE business_key LIKE 'g%:child'),
h AS (
    INSERT INTO history (id, instance_id, token_id, node_id, node_type, state, started_at)
    SELECT md5(c.id::text || 'visit')::uuid, c.id, gen_random_uuid(), 'review', 'userTask',
           'Completed', c.started_at FROM c
)
INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at)
SELECT c.id, '', 'child', 'String', '"x"', c.started_at FROM c
"""


def insert_instances(url: str, definitions: dict[str, str], n: int, now: datetime) -> None:
    """Instances 1..n as the module docstring lays out, with their rows, in one transaction."""
    with psycopg.connect(url) as conn:
        conn.execute(
            _INSERT,
            {
                "n": n,
                "now": now,
                "short": definitions["short"],
                "default": definitions["default"],
            },
        )
        conn.execute(_ROWS)
        conn.execute(_CHILD_ROWS)
        conn.execute("ANALYZE")


def expected_gone(n: int) -> int:
    """Instances (roots and called ones) a full cleanup deletes out of 1..n."""
    roots = sum(1 for i in range(1, n + 1) if i % 20 in GONE_GROUPS)
    children = sum(1 for i in range(1, n + 1) if i % 20 == 12)
    return roots + children


def check_families(conn: psycopg.Connection[Any], n: int, *, finished: bool) -> dict[str, int]:
    """Every generated instance is wholly there (all its rows) or wholly gone; with `finished`,
    exactly the ones past their time are gone. Counts of present and gone roots."""
    present = 0
    partial = conn.execute(
        "SELECT count(*) FROM ("
        "  SELECT k.i, (p.id IS NOT NULL) AS here, "
        "         (SELECT count(*) FROM history h WHERE h.instance_id = k.id) AS h, "
        "         (SELECT count(*) FROM variable v WHERE v.instance_id = k.id) AS v, "
        "         (SELECT count(*) FROM token t WHERE t.instance_id = k.id) AS t, "
        "         (SELECT count(*) FROM incident x WHERE x.instance_id = k.id) AS x "
        "  FROM (SELECT i, md5('root' || i)::uuid AS id FROM generate_series(1, %s) i) k "
        "  LEFT JOIN process_instance p ON p.id = k.id"
        ") r WHERE NOT ((here AND h = 3 AND v = 2 AND t = 2 AND x = 1) "
        "            OR (NOT here AND h = 0 AND v = 0 AND t = 0 AND x = 0))",
        (n,),
    ).fetchone()
    assert partial == (0,), "an instance is partly deleted"
    children = conn.execute(
        "SELECT count(*) FROM ("
        "  SELECT k.i, (p.id IS NOT NULL) AS here, (r.id IS NOT NULL) AS root_here, "
        "         (SELECT count(*) FROM history h WHERE h.instance_id = k.id) AS h, "
        "         (SELECT count(*) FROM variable v WHERE v.instance_id = k.id) AS v "
        "  FROM (SELECT i, md5('child' || i)::uuid AS id, md5('root' || i)::uuid AS root "
        "        FROM generate_series(1, %s) i WHERE i %% 20 IN (11, 12, 13)) k "
        "  LEFT JOIN process_instance p ON p.id = k.id "
        "  LEFT JOIN process_instance r ON r.id = k.root"
        ") c WHERE NOT ((here AND root_here AND h = 1 AND v = 1) "
        "            OR (NOT here AND NOT root_here AND h = 0 AND v = 0))",
        (n,),
    ).fetchone()
    assert children == (0,), "a called instance went without its root, or partly"
    tasks = conn.execute(
        "SELECT count(*) FROM user_task u LEFT JOIN process_instance p ON p.id = u.instance_id "
        "WHERE p.id IS NULL"
    ).fetchone()
    assert tasks == (0,), "a user task outlived its instance"
    rows = conn.execute(
        "SELECT split_part(business_key, ':', 1), count(*) FROM process_instance "
        "WHERE business_key LIKE 'g%' AND super_instance_id IS NULL GROUP BY 1"
    ).fetchall()
    by_group = {int(key[1:]): count for key, count in rows}
    present = sum(by_group.values())
    if finished:
        for group in range(20):
            total = len([i for i in range(1, n + 1) if i % 20 == group])
            assert by_group.get(group, 0) == (0 if group in GONE_GROUPS else total), group
    return {"present": present, "gone": n - present}
