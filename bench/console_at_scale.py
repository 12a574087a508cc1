"""The console, /api/v1 and /engine-rest at scale: fill a large database, then time every page,
fragment, list and count over HTTP while instances flow.

    python -m bench.console_at_scale [--instances 1000000] [--history-per-instance 10]
        [--active 100000] [--outbox 200000] [--variables-every 5] [--requests 30]
        [--budget 20] [--rate 20] [--match REGEX] [--narrowed-keys K1,K2] [--database-url URL]

The fill deploys real models through the engine (a parallel split and join whose join node is
`join`, user tasks, external tasks, a service task, a boundary timer), then writes generated rows
with INSERT ... SELECT over generate_series, in chunks, through plain INSERTs (so any trigger on
the tables sees them): `--instances` process instances over those definitions, most ended
(Completed or Terminated, with `ended_at`), `--active` of them running, each with a completed fork
token and two waiting tokens (a user task and an external task), one open incident (half failed
external tasks, half failed timer jobs), a timer job; `--history-per-instance` visits per
instance with node ids taken from the models; variables for every `--variables-every`-th
instance; `--outbox` outbox rows of the last hour. Then VACUUM ANALYZE.

A server runs in a subprocess (uvicorn, the real app, auth on, job executor off). The client logs
in as an admin (a console session cookie for pages and fragments, an API token as Bearer for
/api/v1 and /engine-rest). While another process starts and completes `--rate` instances a
second (a start, and the user task of the instance started a second earlier), every probe
of bench/scale_probes.py is requested `--requests` times, one at a time, over one keep-alive
connection to 127.0.0.1. Then a narrowed user (a viewer whose grants cover only the definitions
`--narrowed-keys`: a group of theirs revokes every definition, instance, task and historic
instance, their own grants give back those keys) requests the instance lists, counts and the
overview (NARROWED_PATHS, over HTTP Basic for the APIs), each right after the admin requests the
same again (both meet the same load). Server time is the response time measured by the client
(the app sends no Server-Timing header), so it includes the client's own overhead of well under
a millisecond.
Prints p50 and p99 per route against the targets (p50 < 100 ms, p99 < 250 ms), the narrowed
user's beside the admin's, and the fill time.

Without `--database-url` everything runs on a new embedded server in a temporary folder. A
database already filled by an earlier run (same generated ids) is used as it is.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import secrets
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.scale_fill import ADMIN, APPROVAL, PARALLEL, Sizes, deploy, fill, filled
from bench.scale_probes import Probe, probes, sample
from bench.serving import console_login, serving
from engine.api import Engine
from engine.commands.accounts import CreateToken, CreateUser
from engine.commands.identity import AddGroupMember, CreateGroup
from engine.commands.identity_authorizations import SaveAuthorization
from engine.db.database import Database, connect_url_for
from engine.db.ids import new_id
from engine.identity import accounts
from engine.identity.accounts import Role
from engine.identity.permissions import ALL, ANY, AuthorizationType, ResourceType, permission_bits
from engine.queries import accounts as account_reads
from engine.store.identity import AuthorizationRow

P50_TARGET_MS = 100.0
# The status reported for a request that got no answer within the client's timeout.
TIMED_OUT = 0
TIMEOUT_SECONDS = 60.0
P99_TARGET_MS = 250.0
ROOT = Path(__file__).resolve().parents[1]

NARROWED = "scale-narrowed"
# The definitions the narrowed user's grants cover, unless --narrowed-keys names others: every
# running instance is PARALLEL's, and the ended ones spread over four keys.
NARROWED_KEYS = (PARALLEL, APPROVAL)
# The requests timed for the narrowed user too: the overview, the instance lists, their counts.
NARROWED_PATHS = (
    "/",
    "/overview/body",
    "/definitions",
    "/instances",
    "/instances?fragment=rows",
    "/instances?fragment=rows&state=Active",
    "/instances?fragment=rows&state=Completed",
    "/api/v1/instances",
    "/api/v1/instances?state=Active",
    "/engine-rest/process-instance?maxResults=50",
    "/engine-rest/process-instance/count",
    "/engine-rest/history/process-instance?maxResults=50",
    "/engine-rest/history/process-instance/count",
    "/engine-rest/history/process-instance/count?finished=true",
    "/engine-rest/process-definition/statistics?failedJobs=true&incidents=true",
)
# What the narrowed user's group takes away on every resource, and their grants give back on
# each of their definition keys.
_REVOKED = (
    ResourceType.PROCESS_DEFINITION,
    ResourceType.PROCESS_INSTANCE,
    ResourceType.TASK,
    ResourceType.HISTORIC_PROCESS_INSTANCE,
)
_KEY_GRANT = ("READ", "READ_INSTANCE", "READ_TASK", "READ_HISTORY", "READ_INSTANCE_VARIABLE")


# -- the server, the client and the flow ----------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    name: str
    password: str
    # The API token (Bearer); None: the APIs are called with HTTP Basic.
    token: str | None


def admin_credentials(engine: Engine) -> Credentials:
    password = secrets.token_urlsafe(12)
    name = (
        ADMIN
        if account_reads.password_record(engine, ADMIN) is None
        else f"{ADMIN}-{secrets.token_hex(3)}"
    )
    engine.run(CreateUser(name, Role.ADMIN, password))
    token = accounts.new_token()
    engine.run(CreateToken(f"{name}-token", Role.ADMIN, token))
    return Credentials(name, password, token)


def narrowed_credentials(engine: Engine, keys: Sequence[str]) -> Credentials:
    """A viewer whose grants cover only the definitions `keys`: a group of their own revokes
    every definition, instance, task and historic instance (a group's revoke outranks the viewer
    group's grants at the same level), their own grants give each key back (a user's own
    authorizations come first)."""
    name = f"{NARROWED}-{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(12)
    engine.run(CreateUser(name, Role.VIEWER, password))
    engine.run(CreateGroup(name, "Narrowed bench user"))
    engine.run(AddGroupMember(name, name))

    def save(kind: AuthorizationType, user: str | None, group: str | None, *rest: Any) -> None:
        rule = AuthorizationRow(new_id(), kind, user, group, *rest)
        engine.run(SaveAuthorization(rule, create=True))

    for resource in _REVOKED:
        save(AuthorizationType.REVOKE, None, name, int(resource), ANY, ALL)
    pd = ResourceType.PROCESS_DEFINITION
    bits = permission_bits(pd, list(_KEY_GRANT))
    for key in keys:
        save(AuthorizationType.GRANT, name, None, int(pd), key, bits)
    return Credentials(name, password, None)


@contextmanager
def clients(url: str, creds: Credentials) -> Iterator[dict[str, httpx.Client]]:
    """One keep-alive client per surface: the console's with a session cookie (logged in through
    the form, as a browser does), the APIs' with the user's Bearer token, or HTTP Basic when
    they have none."""
    console = httpx.Client(base_url=url, timeout=TIMEOUT_SECONDS)
    if creds.token is None:
        api = httpx.Client(
            base_url=url, timeout=TIMEOUT_SECONDS, auth=httpx.BasicAuth(creds.name, creds.password)
        )
    else:
        bearer = {"Authorization": f"Bearer {creds.token}"}
        api = httpx.Client(base_url=url, timeout=TIMEOUT_SECONDS, headers=bearer)
    try:
        login = console_login(console, creds.name, creds.password)
        if login.status_code not in (200, 303) or "interlock_session" not in console.cookies:
            raise RuntimeError(f"console log-in failed: {login.status_code}")
        yield {"console": console, "api": api, "camunda": api}
    finally:
        console.close()
        api.close()


def flow(database_url: str, rate: float, stop: EventType, started: EventType) -> None:
    """Start an APPROVAL instance and complete the task of the one started a second earlier,
    `rate` times a second, until `stop` (in its own process)."""
    with Engine(database_url, migrate=False, pool_size=2) as engine:
        waiting: deque[str] = deque()
        began = time.monotonic()
        n = 0
        started.set()
        while not stop.is_set():
            delay = began + n / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            handle = engine.start_latest(APPROVAL, {"n": n})
            waiting.extend(str(t.id) for t in handle.user_tasks())
            if len(waiting) > rate:
                engine.complete_task(waiting.popleft())
            n += 1


@contextmanager
def flowing(database_url: str, rate: float) -> Iterator[None]:
    if rate <= 0:
        yield
        return
    context = multiprocessing.get_context("spawn")
    stop, started = context.Event(), context.Event()
    proc = context.Process(target=flow, args=(database_url, rate, stop, started))
    proc.start()
    try:
        if not started.wait(60):
            raise RuntimeError("the flow did not start")
        yield
    finally:
        stop.set()
        proc.join(timeout=30)
        if proc.is_alive():
            proc.kill()


@dataclass(frozen=True)
class Timing:
    probe: Probe
    status: int
    requests: int
    p50_ms: float
    p99_ms: float

    @property
    def ok(self) -> bool:
        return (
            self.status == self.probe.expect
            and self.p50_ms < P50_TARGET_MS
            and self.p99_ms < P99_TARGET_MS
        )


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(
    surfaces: dict[str, httpx.Client],
    all_probes: Sequence[Probe],
    requests: int,
    budget: float,
    *,
    progress: bool = False,
) -> list[Timing]:
    """Each probe once to warm up, then `requests` times, or fewer when its requests have taken
    `budget` seconds (a route far off its target would otherwise hold the run for hours). A probe
    answering other than it should is reported with that status."""
    found = []
    for probe in all_probes:
        client = surfaces[probe.surface]
        status = probe.expect
        samples: list[float] = []
        for n in range(requests + 1):  # the first one warms up
            if sum(samples) >= budget * 1000:
                break
            began = time.perf_counter()
            try:
                answered = client.get(probe.path).status_code
            except httpx.TimeoutException:
                answered = TIMED_OUT
            if n > 0 or answered == TIMED_OUT:
                samples.append((time.perf_counter() - began) * 1000)
            if answered != probe.expect:
                status = answered
            if answered == TIMED_OUT:
                break
        timing = Timing(
            probe, status, len(samples), percentile(samples, 0.5), percentile(samples, 0.99)
        )
        if progress:
            print(f"  {timing.p50_ms:8.1f} {timing.p99_ms:8.1f}  {probe.path}", flush=True)
        found.append(timing)
    return found


def table(timings: Sequence[Timing]) -> str:
    width = max(len(t.probe.path) for t in timings)
    head = f"{'surface':<8} {'request':<{width}} {'status':>6} {'n':>4}"
    lines = [f"{head} {'p50 ms':>8} {'p99 ms':>8}  ok"]
    for t in timings:
        lines.append(
            f"{t.probe.surface:<8} {t.probe.path:<{width}} {t.status:>6} {t.requests:>4} "
            f"{t.p50_ms:>8.1f} {t.p99_ms:>8.1f}  {'yes' if t.ok else 'NO'}"
        )
    slow = [t for t in timings if not t.ok]
    lines.append(
        f"{len(timings) - len(slow)} of {len(timings)} requests within p50 < "
        f"{P50_TARGET_MS:.0f} ms and p99 < {P99_TARGET_MS:.0f} ms"
    )
    return "\n".join(lines)


def beside(pairs: Sequence[tuple[Timing, Timing]]) -> str:
    """The narrowed user's timings, each beside the admin's of the same request (measured right
    before it, so that both meet the same load)."""
    width = max(len(n.probe.path) for n, _ in pairs)
    head = f"{'request':<{width}} {'status':>6} {'p50 ms':>8} {'p99 ms':>8}"
    lines = [f"{head} {'admin p50':>9} {'admin p99':>9}  ok"]
    for n, a in pairs:
        lines.append(
            f"{n.probe.path:<{width}} {n.status:>6} {n.p50_ms:>8.1f} {n.p99_ms:>8.1f} "
            f"{a.p50_ms:>9.1f} {a.p99_ms:>9.1f}  {'yes' if n.ok else 'NO'}"
        )
    slow = [n for n, _ in pairs if not n.ok]
    lines.append(
        f"{len(pairs) - len(slow)} of {len(pairs)} requests of the narrowed user within "
        f"p50 < {P50_TARGET_MS:.0f} ms and p99 < {P99_TARGET_MS:.0f} ms"
    )
    return "\n".join(lines)


# -- the run --------------------------------------------------------------------------------------


def run(
    url: str | None,
    sizes: Sizes,
    requests: int,
    budget: float,
    rate: float,
    match: str | None = None,
    narrowed_keys: Sequence[str] = NARROWED_KEYS,
) -> None:
    with tempfile.TemporaryDirectory(prefix="interlock-bench-") as home:
        database = Database.open(url, home=Path(home))
        try:
            if database.embedded:  # our own throwaway server: durability buys nothing here
                with psycopg.connect(
                    connect_url_for(database.url, "postgres"), autocommit=True
                ) as conn:
                    conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                    conn.execute("ALTER SYSTEM SET full_page_writes = off")
                    conn.execute("ALTER SYSTEM SET max_wal_size = '4GB'")
                    conn.execute("SELECT pg_reload_conf()")
            with Engine(database.url, pool_size=2) as engine:
                definitions = deploy(engine)
                creds = admin_credentials(engine)
                narrowed = narrowed_credentials(engine, narrowed_keys)
            if filled(database.url):
                print("the database holds an earlier fill: used as it is")
                seconds = 0.0
            else:
                print(
                    f"filling: {sizes.instances:,} instances ({sizes.active:,} running), "
                    f"{sizes.instances * sizes.history_per_instance:,} history rows",
                    flush=True,
                )
                seconds = fill(database.url, sizes, definitions)
            print(f"fill: {seconds:.0f} s", flush=True)
            all_probes = [
                p for p in probes(sample(sizes, definitions)) if re.search(match or "", p.path)
            ]
            narrowed_probes = [p for p in all_probes if p.path in NARROWED_PATHS]
            pairs: list[tuple[Timing, Timing]] = []
            with (
                serving(database.url) as base,
                flowing(database.url, rate),
                clients(base, creds) as surfaces,
                clients(base, narrowed) as narrowed_surfaces,
            ):
                timings = measure(surfaces, all_probes, requests, budget, progress=True)
                print(f"the narrowed user, whose grants cover {', '.join(narrowed_keys)}:")
                for probe in narrowed_probes:
                    [admin] = measure(surfaces, [probe], requests, budget)
                    [mine] = measure(narrowed_surfaces, [probe], requests, budget, progress=True)
                    pairs.append((mine, admin))
            print(
                f"\n{len(all_probes)} requests x {requests}, one at a time over keep-alive, "
                f"while {rate:g} instances/s start and complete; client-measured time, ms"
            )
            print(table(timings))
            if pairs:
                print(
                    f"\nthe narrowed user (grants on {', '.join(narrowed_keys)} only), "
                    "beside the admin's same request just before:"
                )
                print(beside(pairs))
            print(f"fill time: {seconds:.0f} s")
        finally:
            database.close()


def main(argv: list[str] | None = None) -> None:
    arguments = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=Sizes.instances)
    parser.add_argument("--history-per-instance", type=int, default=Sizes.history_per_instance)
    parser.add_argument("--active", type=int, default=Sizes.active)
    parser.add_argument("--outbox", type=int, default=Sizes.outbox)
    parser.add_argument("--variables-every", type=int, default=Sizes.variables_every)
    parser.add_argument("--requests", type=int, default=30, help="timed requests per probe")
    parser.add_argument(
        "--budget", type=float, default=20.0, help="seconds of requests per probe at most"
    )
    parser.add_argument("--rate", type=float, default=20.0, help="instances/s flowing meanwhile")
    parser.add_argument("--match", help="time only the requests whose path matches this regex")
    parser.add_argument(
        "--narrowed-keys",
        default=",".join(NARROWED_KEYS),
        help="the definition keys the narrowed user's grants cover, comma-separated",
    )
    parser.add_argument("--database-url")
    args = parser.parse_args(arguments)
    try:
        sizes = Sizes(
            args.instances,
            args.history_per_instance,
            args.active,
            args.outbox,
            args.variables_every,
        )
    except ValueError as exc:
        parser.error(str(exc))
    keys = [k for k in args.narrowed_keys.split(",") if k]
    run(args.database_url, sizes, args.requests, args.budget, args.rate, args.match, keys)


if __name__ == "__main__":
    main()
