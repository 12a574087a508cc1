"""Chaos soak: Interlock processes SIGKILLed at random under load, then every instance checked.

    python -m bench.chaos --seconds 60 [--rate 5] [--kill-every 2.5] [--no-postmaster-kill]

Two `interlock serve` replicas (each with its job executor), one `interlock jobs` executor and two
`interlock worker` processes share one embedded PostgreSQL under a private temporary
INTERLOCK_HOME. Instances of a process with a parallel split, an external task, a one-second timer
followed by an asynchronous continuation, and a join are started over HTTP at a steady rate,
alternating between the replicas; a start that fails (a replica killed, the database away) is sent
again, to the other replica, with the same Idempotency-Key, so it never starts twice. Throughout
the run a random Interlock process is killed with SIGKILL and started again; halfway through, the
PostgreSQL postmaster itself is killed once. Afterwards the soak waits for every instance to end,
stops the processes with SIGTERM (each must exit 0) and checks the database:

- every start that was answered made exactly one instance, and every instance completed;
- no history visit is doubled (per token and node), no timer fired twice, each join was left
  once, no external task was completed twice;
- per instance, the outbox sequence follows the commits: one transaction's rows are contiguous,
  the start is in the first transaction and the completion in the last, and each visit's start
  precedes its end.

It prints the figures: kills by kind, instances started and completed, stuck and doubled, and the
recovery time after the postmaster kill (until a start over HTTP succeeded again).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import psycopg

from bench.serving import free_port
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.db.database import Database
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState

ROOT = Path(__file__).resolve().parents[1]
KEY = "chaos"
TOPIC = "chaos-work"


def model() -> ProcessModel:
    """Split: an external task on one branch, a 1 s timer and an asynchronous step on the other;
    then the join."""
    return (
        ProcessBuilder(KEY)
        .start_event("start")
        .parallel_gateway("split")
        .service_task("work", topic=TOPIC)
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT1S"))
        .task("after-wait", async_before=True)
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split", "work", "join", "end")
        .chain("split", "wait", "after-wait", "join")
        .build()
    )


@dataclass
class Options:
    seconds: float = 60.0
    rate: float = 5.0  # instance starts per second
    kill_every: float = 2.5  # mean seconds between SIGKILLs
    postmaster_kill: bool = True
    settle_seconds: float = 90.0  # at most this long for every instance to end afterwards
    seed: int | None = None
    home: Path | None = None  # default: a new temporary folder, deleted afterwards
    verbose: bool = True


@dataclass
class Figures:
    kills: Counter[str] = field(default_factory=Counter)
    started: int = 0  # starts answered 201
    failed_starts: int = 0  # starts never answered 201 (given up at the end)
    retried_starts: int = 0  # starts sent more than once
    refused_starts: list[str] = field(default_factory=list)  # answered 4xx (other than 409)
    instances: int = 0
    completed: int = 0
    stuck: int = 0
    doubled: dict[str, int] = field(default_factory=dict)
    out_of_order: int = 0
    exit_codes: dict[str, int | None] = field(default_factory=dict)
    database_back_seconds: float | None = None
    recovery_seconds: float | None = None
    settle_seconds: float = 0.0

    @property
    def doubled_total(self) -> int:
        return sum(self.doubled.values())

    @property
    def sound(self) -> bool:
        """Nothing stuck, doubled or out of order, every start answered, every exit 0."""
        return (
            self.stuck == 0
            and self.doubled_total == 0
            and self.out_of_order == 0
            and self.failed_starts == 0
            and not self.refused_starts
            and self.instances == self.started
            and all(code == 0 for code in self.exit_codes.values())
        )

    def lines(self) -> list[str]:
        kills = ", ".join(f"{kind} {n}" for kind, n in sorted(self.kills.items())) or "none"
        doubled = ", ".join(f"{what} {n}" for what, n in self.doubled.items())
        recovery = (
            "no postmaster kill"
            if self.recovery_seconds is None and self.database_back_seconds is None
            else f"database back after {_seconds(self.database_back_seconds)}, "
            f"starts succeed again after {_seconds(self.recovery_seconds)}"
        )
        return [
            f"kills: {sum(self.kills.values())} ({kills})",
            f"instances: {self.started} started over HTTP ({self.retried_starts} sent again, "
            f"{self.failed_starts} given up, {len(self.refused_starts)} refused), "
            f"{self.instances} in the database, "
            f"{self.completed} completed",
            f"stuck: {self.stuck}",
            f"doubled: {self.doubled_total} ({doubled})",
            f"outbox out of order: {self.out_of_order}",
            f"postmaster kill: {recovery}",
            f"settled {self.settle_seconds:.1f}s after the load ended; exit codes on SIGTERM: "
            + ", ".join(f"{name} {code}" for name, code in sorted(self.exit_codes.items())),
        ]


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f}s"


# -- the processes --------------------------------------------------------------------------------


class Proc:
    """One Interlock process of the soak, started again after each kill; output to a log file."""

    def __init__(self, name: str, kind: str, args: list[str], env: dict[str, str], logs: Path):
        self.name, self.kind, self.args, self.env = name, kind, args, env
        self.log_path = logs / f"{name}.log"
        self.popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._terminated = False
        self._offset = 0

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    # What a process writes to its log once it is running (and handles SIGTERM gracefully).
    READY = {
        "serve": b"Application startup complete",
        "jobs": b"job executor",
        "worker": b"handles " + TOPIC.encode(),
    }

    @property
    def ready(self) -> bool:
        """Running since its last start far enough to have said so in its log."""
        if not self.alive:
            return False
        with self.log_path.open("rb") as log:
            log.seek(self._offset)
            return self.READY[self.kind] in log.read()

    def start(self) -> None:
        if self._log is None:
            self._log = self.log_path.open("ab")
        self._log.flush()
        self._offset = self.log_path.stat().st_size
        self._terminated = False
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "app.cli", *self.args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )

    def kill(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait()

    def signal_stop(self) -> None:
        """Send SIGTERM once."""
        if self.popen is not None and self.popen.poll() is None and not self._terminated:
            self._terminated = True
            self.popen.send_signal(signal.SIGTERM)

    def terminate(self, timeout: float) -> int | None:
        """SIGTERM (once) and wait: the exit code (None: it had to be killed)."""
        if self.popen is None:
            return None
        self.signal_stop()
        try:
            code: int | None = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = None
        if self._log is not None:
            self._log.close()
            self._log = None
        return code


def _processes(home: Path, logs: Path) -> tuple[list[Proc], list[str]]:
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "INTERLOCK_HOME")}
    env = {
        **base,
        "PYTHONPATH": str(ROOT),
        "INTERLOCK_HOME": str(home),
        # Locks of a killed process expire soon, so its work is taken over within the run.
        "INTERLOCK_JOB_LOCK_SECONDS": "3",
        "INTERLOCK_SHUTDOWN_GRACE_SECONDS": "5",
    }
    procs, urls = [], []
    for n in (1, 2):
        port = free_port()
        urls.append(f"http://127.0.0.1:{port}")
        procs.append(
            Proc(f"serve-{n}", "serve", ["serve", "--no-auth", "--port", str(port)], env, logs)
        )
    procs.append(Proc("jobs", "jobs", ["jobs"], env, logs))
    for n in (1, 2):
        args = ["worker", "bench.chaos_worker", "--lock-ms", "3000"]
        procs.append(Proc(f"worker-{n}", "worker", args, env, logs))
    return procs, urls


def _wait_ready(procs: list[Proc], timeout: float) -> None:
    """Until every process says it is running (a process still starting up when SIGTERM comes
    may not have its handler yet)."""
    deadline = time.monotonic() + timeout
    for proc in procs:
        while not proc.ready:
            if not proc.alive:
                proc.start()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{proc.name} did not start; see {proc.log_path}")
            time.sleep(0.2)


# -- the load -------------------------------------------------------------------------------------


class Starter:
    """Starts instances at a steady rate over HTTP, alternating replicas; a failed start goes to
    the other replica with the same Idempotency-Key until it is answered 201 or `stop` is set."""

    def __init__(self, urls: list[str], rate: float) -> None:
        self.urls = urls
        self.rate = rate
        self.stop = threading.Event()
        self.give_up = threading.Event()
        self.answered: dict[str, float] = {}  # business key -> when its start was answered
        self.sent_at: dict[str, float] = {}
        self.attempts: Counter[str] = Counter()
        self.refused: list[str] = []  # starts answered with a 4xx other than 409
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="chaos-start")
        self._futures: list[Future[None]] = []
        self._client = httpx.Client(timeout=httpx.Timeout(5.0, connect=1.0))

    def run(self) -> None:
        n = 0
        began = time.monotonic()
        while not self.stop.is_set():
            self._futures.append(self._pool.submit(self._start, n))
            n += 1
            self.stop.wait(max(0.0, began + n / self.rate - time.monotonic()))

    def finish(self, timeout: float) -> None:
        """Wait for the starts in progress (giving up after `timeout`)."""
        deadline = time.monotonic() + timeout
        for future in self._futures:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.give_up.set()
            try:
                future.result(timeout=max(remaining, 0) + 10)
            except Exception:
                self.give_up.set()
        self.give_up.set()
        self._pool.shutdown(wait=True)
        self._client.close()

    def _start(self, n: int) -> None:
        key = f"soak-{n:06d}"
        replica = n % len(self.urls)
        while not self.give_up.is_set():
            if self.attempt(key, self.urls[replica]) is not None:
                return
            replica = (replica + 1) % len(self.urls)
            time.sleep(0.2)

    def attempt(self, key: str, url: str) -> bool | None:
        """Send the start of `key` to `url` once: True when answered 201, False when refused
        (a 4xx other than 409), None when it should be sent again."""
        with self._lock:
            self.attempts[key] += 1
            self.sent_at.setdefault(key, time.monotonic())
        try:
            response = self._client.post(
                f"{url}/api/v1/definitions/key/{KEY}/start",
                json={"business_key": key},
                headers={"Idempotency-Key": key},
            )
        except httpx.HTTPError:
            return None
        if response.status_code == 201:
            with self._lock:
                self.answered[key] = time.monotonic()
            return True
        if response.status_code < 500 and response.status_code != 409:
            with self._lock:
                self.refused.append(f"{key}: {response.status_code} {response.text[:200]}")
            return False
        return None


# -- the checks -----------------------------------------------------------------------------------


def _count(conn: psycopg.Connection[Any], query: str, *params: object) -> int:
    row = conn.execute(query, params).fetchone()
    return int(row[0]) if row is not None else 0


# Each: a name and a query counting the violations.
DOUBLED = {
    "history visits (token, node)": "SELECT count(*) FROM (SELECT 1 FROM history "
    "GROUP BY token_id, node_id HAVING count(*) > 1) AS d",
    "timers fired": "SELECT count(*) FROM (SELECT 1 FROM outbox_event WHERE event = 'job.executed' "
    "AND node_id = 'wait' GROUP BY instance_id HAVING count(*) > 1) AS d",
    "joins left": "SELECT count(*) FROM (SELECT 1 FROM outbox_event WHERE event = 'token.merged' "
    "AND node_id = 'join' GROUP BY instance_id HAVING count(*) > 1) AS d",
    "external tasks completed": "SELECT count(*) FROM (SELECT 1 FROM outbox_event "
    "WHERE event = 'external_task.completed' GROUP BY instance_id HAVING count(*) > 1) AS d",
    "instances ended": "SELECT count(*) FROM (SELECT 1 FROM outbox_event "
    "WHERE event = 'instance.completed' GROUP BY instance_id HAVING count(*) > 1) AS d",
}

# Per instance, ordered by seq: a transaction's rows are contiguous (no txid seen again after
# another one), the start is in the first transaction, the completion in the last, and each
# visit's start precedes its end.
OUT_OF_ORDER = """
WITH o AS (
    SELECT instance_id, seq, txid, event, history_id,
           lag(txid) OVER w AS prev_txid,
           first_value(txid) OVER w AS first_txid,
           last_value(txid) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
               AS last_txid
    FROM outbox_event WINDOW w AS (PARTITION BY instance_id ORDER BY seq)
), broken_runs AS (
    SELECT DISTINCT a.instance_id FROM o a
    JOIN o b ON b.instance_id = a.instance_id AND b.txid = a.txid AND b.seq > a.seq
    JOIN o c ON c.instance_id = a.instance_id AND c.txid <> a.txid
                AND c.seq > a.seq AND c.seq < b.seq
), wrong_ends AS (
    SELECT DISTINCT instance_id FROM o
    WHERE (event = 'instance.started' AND txid <> first_txid)
       OR (event = 'instance.completed' AND txid <> last_txid)
), visits AS (
    SELECT DISTINCT s.instance_id FROM o s JOIN o e
      ON e.history_id = s.history_id AND s.event = 'visit.active'
     AND e.event = 'visit.completed' AND e.seq < s.seq
)
SELECT count(*) FROM (
    SELECT instance_id FROM broken_runs UNION SELECT instance_id FROM wrong_ends
    UNION SELECT instance_id FROM visits
) AS bad
"""


def check(conn: psycopg.Connection[Any], answered: Iterable[str], figures: Figures) -> None:
    """Fill in the database's side of `figures`: `answered` are the business keys whose start
    was answered 201."""
    rows = conn.execute(
        "SELECT business_key, count(*), count(*) FILTER (WHERE state = %s) "
        "FROM process_instance WHERE definition_key = %s GROUP BY business_key",
        (InstanceState.COMPLETED.value, KEY),
    ).fetchall()
    by_key = {key: (total, done) for key, total, done in rows}
    figures.instances = sum(total for total, _ in by_key.values())
    figures.completed = sum(done for _, done in by_key.values())
    figures.stuck = sum(total - done for total, done in by_key.values()) + sum(
        1 for key in answered if key not in by_key
    )
    doubled = {"instances per start": sum(1 for t, _ in by_key.values() if t > 1)}
    doubled.update({what: _count(conn, query) for what, query in DOUBLED.items()})
    figures.doubled = doubled
    figures.out_of_order = _count(conn, OUT_OF_ORDER)


def _settle(url: str, starter: Starter, timeout: float) -> float:
    """Wait until every answered start's instance has ended; the seconds it took."""
    began = time.monotonic()
    deadline = began + timeout
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
                open_ = _count(
                    conn,
                    "SELECT count(*) FROM process_instance WHERE definition_key = %s "
                    "AND state <> %s",
                    KEY,
                    InstanceState.COMPLETED.value,
                )
                ended = _count(
                    conn,
                    "SELECT count(*) FROM process_instance WHERE definition_key = %s",
                    KEY,
                )
            if open_ == 0 and ended >= len(starter.answered):
                break
        except psycopg.OperationalError:
            pass
        time.sleep(0.5)
    return time.monotonic() - began


# -- the run --------------------------------------------------------------------------------------


def _postmaster_pid(pgdata: Path) -> int | None:
    try:
        first = (pgdata / "postmaster.pid").read_text().split("\n", 1)[0].strip()
    except FileNotFoundError:
        return None
    return int(first) if first.isdigit() else None


def _database_up(url: str) -> bool:
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=1) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


class Chaos:
    def __init__(self, options: Options, procs: list[Proc], url: str, pgdata: Path) -> None:
        self.options = options
        self.procs = procs
        self.url = url
        self.pgdata = pgdata
        self.random = random.Random(options.seed)
        self.figures = Figures()
        self.stop = threading.Event()
        self.postmaster_killed_at: float | None = None
        self.recovered = threading.Event()
        self.starter: Starter | None = None
        self.began = time.monotonic()

    def say(self, text: str) -> None:
        if self.options.verbose:
            print(f"[chaos {time.monotonic() - self.began:6.1f}s] {text}", flush=True)

    def kill_loop(self, began: float) -> None:
        """SIGKILL a random process every `kill_every` seconds on average and start it again
        after a moment, never both replicas at once (one keeps serving); halfway, SIGKILL the
        postmaster once and kill nothing else until starts succeed again."""
        postmaster_due = began + self.options.seconds / 2 if self.options.postmaster_kill else None
        while not self.stop.wait(self.random.uniform(0.5, 1.5) * self.options.kill_every):
            if postmaster_due is not None and time.monotonic() >= postmaster_due:
                postmaster_due = None
                self.kill_postmaster()
                self.recovered.wait(60)
                continue
            victim = self.random.choice(self.procs)
            others = [p for p in self.procs if p.kind == "serve" and p is not victim]
            if victim.kind == "serve" and not all(p.ready for p in others):
                continue
            victim.kill()
            self.figures.kills[victim.kind] += 1
            self.say(f"SIGKILL {victim.name}")
            if self.stop.wait(self.random.uniform(0.2, 1.0)):
                break
            victim.start()

    def kill_postmaster(self) -> None:
        pid = _postmaster_pid(self.pgdata)
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        self.postmaster_killed_at = time.monotonic()
        self.figures.kills["postmaster"] += 1
        self.say(f"SIGKILL postmaster {pid}")
        threading.Thread(target=self._watch_database, daemon=True).start()
        threading.Thread(target=self._probe, daemon=True).start()

    def _watch_database(self) -> None:
        killed = self.postmaster_killed_at
        assert killed is not None
        time.sleep(0.2)
        while not _database_up(self.url):
            if time.monotonic() - killed > 300:
                return
            time.sleep(0.1)
        self.figures.database_back_seconds = time.monotonic() - killed
        self.say(f"database back after {self.figures.database_back_seconds:.1f}s")

    def _probe(self) -> None:
        """After the postmaster kill: one start sent every quarter second, to the replicas in
        turn, until it is answered 201 (one key: however often it is sent, it starts once)."""
        killed = self.postmaster_killed_at
        assert killed is not None and self.starter is not None
        urls = self.starter.urls
        answer, n = None, 0
        while answer is None and time.monotonic() - killed < 300:
            answer = self.starter.attempt("probe", urls[n % len(urls)])
            n += 1
            if answer is None:
                time.sleep(0.25)
        if answer:
            self.figures.recovery_seconds = self.starter.answered["probe"] - killed
            self.say(f"starts succeed again after {self.figures.recovery_seconds:.1f}s")
        self.recovered.set()


def run(options: Options) -> Figures:
    """The soak; the figures (a caller asserts on them)."""
    home = options.home or Path(tempfile.mkdtemp(prefix="interlock-chaos-"))
    temporary = options.home is None
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    database = Database.open_embedded(home)
    assert database.pgdata is not None
    procs: list[Proc] = []
    try:
        procs, urls = _processes(home, logs)
        for proc in procs:
            proc.start()
        # Meanwhile (migrations queue on their advisory lock; a worker retries until they ran).
        with Engine(database.url) as engine:
            engine.deploy(model())
        chaos = Chaos(options, procs, database.url, database.pgdata)
        chaos.say(f"database ready under {home}")
        _wait_ready(procs, 120)
        chaos.say(f"5 processes up under {home}; load for {options.seconds:.0f}s")
        starter = chaos.starter = Starter(urls, options.rate)
        began = time.monotonic()
        load = threading.Thread(target=starter.run, name="chaos-load", daemon=True)
        killer = threading.Thread(target=chaos.kill_loop, args=(began,), daemon=True)
        load.start()
        killer.start()
        chaos.stop.wait(options.seconds)
        chaos.stop.set()
        starter.stop.set()
        killer.join()
        load.join()
        _wait_ready(procs, 120)
        starter.finish(timeout=options.settle_seconds / 2)
        figures = chaos.figures
        chaos.say(f"load over; {len(starter.answered)} starts answered; settling")
        figures.settle_seconds = _settle(database.url, starter, options.settle_seconds)
        chaos.say("settled; SIGTERM to every process")
        for proc in procs:
            proc.signal_stop()
        for proc in procs:
            figures.exit_codes[proc.name] = proc.terminate(timeout=20)
        chaos.say("stopped")
        figures.started = len(starter.answered)
        figures.failed_starts = sum(1 for key in starter.attempts if key not in starter.answered)
        figures.retried_starts = sum(1 for n in starter.attempts.values() if n > 1)
        figures.refused_starts = list(starter.refused)
        with psycopg.connect(database.url, autocommit=True) as conn:
            check(conn, starter.answered, figures)
        return figures
    finally:
        for proc in procs:
            if proc.alive:
                proc.kill()
        _let_go(database)
        if temporary:
            shutil.rmtree(home, ignore_errors=True)


def _let_go(database: Database) -> None:
    """Release the embedded server; stop it even if killed processes are still counted as its
    users (a SIGKILLed process never lets go)."""
    pgdata = database.pgdata
    assert pgdata is not None
    handles = pgdata / ".handle_pids.json"
    database.close()
    pid = _postmaster_pid(pgdata)
    if pid is None:
        return
    with open(handles, "w") as out:
        json.dump([], out)
    try:
        os.kill(pid, signal.SIGINT)  # fast shutdown
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while (pgdata / "postmaster.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.chaos", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=5.0, help="instance starts per second")
    parser.add_argument("--kill-every", type=float, default=2.5, help="mean seconds between kills")
    parser.add_argument("--no-postmaster-kill", action="store_true")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--home", type=Path, help="keep the run's data and logs here")
    args = parser.parse_args(argv)
    figures = run(
        Options(
            seconds=args.seconds,
            rate=args.rate,
            kill_every=args.kill_every,
            postmaster_kill=not args.no_postmaster_kill,
            seed=args.seed,
            home=args.home,
        )
    )
    for line in figures.lines():
        print(line)
    return 0 if figures.sound else 1


if __name__ == "__main__":
    raise SystemExit(main())
