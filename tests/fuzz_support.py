"""What the fuzz tests of both HTTP surfaces share: an in-process app over a seeded database of its
own, the credentials of every role, hostile values, and table snapshots that prove a refused
request wrote nothing."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from psycopg import sql
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from engine.api import Engine
from engine.db.database import connect_url_for
from engine.identity.accounts import Role
from engine.queries import summaries
from tests.api import processes
from tests.server import PASSWORD, role_credentials

# -- hypothesis settings ---------------------------------------------------------------------------

# The default run: few examples, always the same ones (no example database, no randomness), so CI
# sees the same requests on every run. The app and its database live for the whole module, which
# the function-scoped-fixture check cannot know; a request with a snapshot before and after takes
# a few milliseconds, which too_slow would flag on a loaded 2-core machine.
SUPPRESSED = [
    HealthCheck.too_slow,
    HealthCheck.function_scoped_fixture,
    HealthCheck.filter_too_much,
]
DEFAULT = settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=SUPPRESSED,
    print_blob=True,
)
# `pytest -m slow`: many more examples, random ones.
SLOW = settings(
    max_examples=2000,
    derandomize=False,
    database=None,
    deadline=None,
    suppress_health_check=SUPPRESSED,
    print_blob=True,
)

# -- the app ---------------------------------------------------------------------------------------

ROLES = tuple(role.value for role in Role)


@dataclass
class Seeded:
    """Ids that exist in the fuzzed database, so that paths sometimes name real resources."""

    definition_ids: list[str] = field(default_factory=list)
    definition_keys: list[str] = field(default_factory=list)
    instance_ids: list[str] = field(default_factory=list)
    user_task_ids: list[str] = field(default_factory=list)
    external_task_ids: list[str] = field(default_factory=list)
    incident_ids: list[str] = field(default_factory=list)
    job_ids: list[str] = field(default_factory=list)
    deployment_ids: list[str] = field(default_factory=list)
    variable_names: list[str] = field(default_factory=list)
    worker_ids: list[str] = field(default_factory=list)

    def all_ids(self) -> list[str]:
        return [
            *self.definition_ids,
            *self.instance_ids,
            *self.user_task_ids,
            *self.external_task_ids,
            *self.incident_ids,
            *self.job_ids,
            *self.deployment_ids,
        ]


@dataclass
class FuzzApp:
    app: Starlette
    engine: Engine
    database_url: str
    tokens: dict[str, str]
    seeded: Seeded
    client: TestClient

    def bearer(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}


def basic(name: str, password: str = PASSWORD) -> dict[str, str]:
    encoded = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def seed(engine: Engine) -> Seeded:
    """Deploy the API tests' processes and leave one of everything waiting: instances, a user
    task, a locked and an unlocked external task, an incident, a timer job."""
    found = Seeded()
    deployed = engine.deploy(*processes.ALL, name="fuzz")
    if deployed.deployment_id is not None:
        found.deployment_ids.append(deployed.deployment_id)
    found.definition_ids += [str(d["id"]) for d in deployed.definitions]
    found.definition_keys += [str(d["key"]) for d in deployed.definitions]
    variables = {"amount": 30, "text": "x", "nested": {"a": [1, 2]}}
    found.variable_names += list(variables)
    for key in ("review", "waiting", "external", "external", "timer"):
        handle = engine.start_latest(key, variables, business_key=f"fuzz-{key}")
        found.instance_ids.append(str(handle.id))
    with engine.connection() as conn:
        found.user_task_ids += [
            str(row[0]) for row in conn.execute("SELECT id FROM user_task").fetchall()
        ]
        found.job_ids += [str(row[0]) for row in conn.execute("SELECT id FROM job").fetchall()]
    locked = engine.fetch_and_lock("fuzz-worker", {"work": 600_000})
    found.worker_ids.append("fuzz-worker")
    found.external_task_ids += [str(task["id"]) for task in locked]
    engine.fail_external_task(str(locked[0]["id"]), "fuzz-worker", "broken")
    with engine.connection() as conn:
        found.incident_ids += [
            str(row[0]) for row in conn.execute("SELECT id FROM incident").fetchall()
        ]
        found.external_task_ids += [
            str(row[0]) for row in conn.execute("SELECT id FROM external_task").fetchall()
        ]
    found.external_task_ids = sorted(set(found.external_task_ids))
    return found


# Wrong credentials are among the fuzzed inputs; throttled log-ins would answer every later
# request with 429, and the endpoints behind the log-in would go untested.
_UNTHROTTLED: dict[str, Any] = {
    "login_failures_per_user": 10**9,
    "login_failures_per_user_all_addresses": 10**9,
    "login_failures_per_address": 10**9,
}


def fuzz_settings(url: str) -> Settings:
    known = {f.name for f in dataclasses.fields(Settings)}
    extra = {name: value for name, value in _UNTHROTTLED.items() if name in known}
    return Settings(database_url=url, run_jobs=False, secret="fuzz", **extra)


@contextmanager
def fuzz_app(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[FuzzApp]:
    """The whole app in process over a fresh seeded database, its lifespan running (the engine
    is the caller's; no job executor, so that nothing but the fuzzed requests writes)."""
    name = f"test_fuzz_{uuid.uuid4().hex[:10]}"
    admin_connection.execute(
        sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template_database)
        )
    )
    url = connect_url_for(pg_server, name)
    try:
        engine = Engine(url, migrate=False)
        try:
            tokens = role_credentials(engine)
            seeded = seed(engine)
            app = create_app(fuzz_settings(url), engine)
            # Refusals are what is being tested: a 500 must come back as a response, not raise.
            with TestClient(app, raise_server_exceptions=False) as client:
                yield FuzzApp(app, engine, url, tokens, seeded, client)
        finally:
            engine.close()
    finally:
        admin_connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


class SharedLifespan:
    """An ASGI app that serves `app`'s requests but leaves its lifespan to whoever already runs
    it: schemathesis' in-process transport starts the lifespan of the app it is given (and keeps
    it until the interpreter exits), which would run a second one over the same engine."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await self.app(scope, receive, send)


# -- snapshots -------------------------------------------------------------------------------------

Snapshot = dict[str, tuple[int, str]]

# Compared by what they count (see `Tables`).
SUMMARY_TABLES = frozenset({"instance_summary", "node_summary", "activity_bucket", "summary_delta"})


class Tables:
    """Row count and a hash of the contents of every table of the public schema, in one
    statement. Nothing is left out: a refused request must not write anywhere (the idempotency
    table included: only a command that ran records its key; history and outbox rows only come
    from a committed command). The summary rows are compared by what they say (base rows plus
    deltas, engine/db/summaries.py), not row by row: the fold moves deltas into base rows in the
    background without changing a count."""

    def __init__(self, database_url: str) -> None:
        self.conn: psycopg.Connection[Any] = psycopg.connect(database_url, autocommit=True)
        names = [
            row[0]
            for row in self.conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
            ).fetchall()
        ]
        assert names, "no tables to watch"
        names = [name for name in names if name not in SUMMARY_TABLES]
        self.names = names
        parts = [
            sql.SQL(
                "SELECT {name}, count(*), coalesce(md5(string_agg(t::text, E'\\n' "
                "ORDER BY t::text)), '') FROM {table} AS t"
            ).format(name=sql.Literal(table), table=sql.Identifier(table))
            for table in names
        ]
        self.query = sql.SQL(" UNION ALL ").join(parts)

    def snapshot(self) -> Snapshot:
        found = {row[0]: (row[1], row[2]) for row in self.conn.execute(self.query).fetchall()}
        said = summaries.current(self.conn)
        counts = len(said.instances) + len(said.nodes) + len(said.buckets)
        rows = [sorted(said.instances.items()), sorted(said.nodes.items())]
        rows.append(sorted(said.buckets.items()))
        found["summaries"] = (counts, repr(rows))
        return found

    def close(self) -> None:
        self.conn.close()


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(
        f"{name}: {before.get(name)} -> {after.get(name)}"
        for name in set(before) | set(after)
        if before.get(name) != after.get(name)
    )


def describe(method: str, url: str, headers: Mapping[str, str], body: Any, response: Any) -> str:
    shown = {k: v for k, v in headers.items() if k.lower() != "authorization"}
    text = response.text if hasattr(response, "text") else repr(response)
    return (
        f"{method} {url}\nheaders: {shown}\nbody: {body!r:.2000}\n"
        f"-> {response.status_code} {text[:2000]}"
    )


# -- hostile values --------------------------------------------------------------------------------

HOSTILE_TEXT = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\\",
    "%",
    "%00",
    "%zz",
    "'",
    '"',
    "' OR 1=1 --",
    "_%",
    "*",
    "..",
    "../..",
    "/",
    "\n",
    "\r\n",
    "\u202e",
    "\U0001f600",
    "null",
    "true",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1",
    "0",
    str(2**63),
    str(2**70),
    "9" * 5000,
    "x" * 10_000,
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "2025-13-45T99:99:99Z",
    "2025-01-31T12:00:00",
    "2025-01-31T12:00:00.000+0100",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z",
]
# Python refuses to turn an int of more than 4300 digits into text, so a 5000-digit number is
# this placeholder until `dumps` writes it into the JSON text.
HUGE = "<5000 digits>"
HUGE_LITERAL = "9" * 5000
HOSTILE_NUMBERS: list[Any] = [
    -1,
    0,
    1,
    2**31,
    2**63,
    2**70,
    -(2**70),
    10**4000,
    HUGE,
    1.5,
    -0.0,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
    True,
    False,
]
# JSON documents as text, for what json.dumps would refuse or normalise away.
RAW_JSON = [
    b"",
    b"{",
    b"[]",
    b"null",
    b"1",
    b'"x"',
    b"NaN",
    b'{"a": NaN}',
    b'{"a": Infinity, "b": -Infinity}',
    b'{"a": 1e999}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b'{"a": "\\ud800"}',
    b'{"\\ud800": 1}',
    b'{"a": "\\u0000"}',
    b'{"a": "x\x00"}',
    b"\xff\xfe",
    b'{"a": "\xff"}',
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b'{"a": 1, "a": 2}',
    b"\xef\xbb\xbf{}",
]


def dumps(value: Any) -> bytes:
    """JSON text of `value` as a careless client would write it: NaN and Infinity literals,
    lone surrogates as they are, `HUGE` as its 5000 digits."""
    text = json.dumps(value, allow_nan=True).replace(json.dumps(HUGE), HUGE_LITERAL)
    return text.encode("utf-8", "surrogatepass")


def hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE_TEXT),
        st.text(max_size=20),
        st.text(alphabet=st.characters(codec=None, categories=["Cs", "Cc"]), max_size=5),
    )


def hostile_number() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HOSTILE_NUMBERS),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
    )


def deep(depth: int) -> Any:
    value: Any = 1
    for n in range(depth):
        value = [value] if n % 2 else {"a": value}
    return value


def hostile_json() -> st.SearchStrategy[Any]:
    """Any JSON-ish value, including what strict JSON forbids (NaN, infinities, lone
    surrogates, NUL) and nesting deeper than a recursive parser likes."""
    leaves = st.one_of(st.none(), st.booleans(), hostile_number(), hostile_text())
    nested = st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(hostile_text(), children, max_size=3),
        ),
        max_leaves=8,
    )
    return st.one_of(nested, st.sampled_from([deep(200), deep(1100)]))
