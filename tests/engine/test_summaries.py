"""Summary rows stay exact: whatever commands race from several connections, with the fold
running beside them (two folders at once), the summaries equal a recount of the big tables,
compared inside one snapshot mid-run and at the end. The commands end visits every way a visit
ends canceled (cancellation, an interrupting boundary event, a terminate end event, a
modification), move instances between versions and delete ended ones."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.cleanup import CleanupBatch
from engine.commands.summaries import FoldSummaries, RebuildSummaries
from engine.core.handlers import TaskContext
from engine.core.settings import EngineSettings
from engine.db.retention import RetentionSettings
from engine.db.summaries import Folder
from engine.errors import InterlockError
from engine.model import TimerDefinition
from engine.queries import summaries
from engine.queries.summaries import NodeCounts
from engine.semantics.modification import CancelToken

WORKER = "summary-worker"
ROOT = Path(__file__).resolve().parents[2]


def mixed_model(name: str | None = None) -> Any:
    """start -> split -> review (user task) | ship (external task) | charge (async handler that
    may fail: an incident once its one retry is spent) -> join -> end."""
    return (
        ProcessBuilder("mixed", name)
        .start_event("start")
        .parallel_gateway("split")
        .user_task("review", "Review")
        .service_task("ship", topic="ship")
        .service_task("charge", handler="charge", async_before=True)
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "review", "join")
        .chain("split", "ship", "join")
        .chain("split", "charge", "join")
        .chain("join", "end")
        .build()
    )


def guarded_model(name: str | None = None) -> Any:
    """start -> split -> hold (user task) -> done | review (user task) -> reviewed; an
    interrupting one-hour timer on review leads to a terminate end: review's visit and hold's
    end canceled when it fires."""
    return (
        ProcessBuilder("guarded", name)
        .start_event("start")
        .parallel_gateway("split")
        .user_task("hold", "Hold")
        .end_event("done")
        .user_task("review", "Review")
        .end_event("reviewed")
        .boundary_event("late", "review", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("stop", terminate=True)
        .chain("start", "split")
        .chain("split", "hold", "done")
        .chain("split", "review", "reviewed")
        .chain("late", "stop")
        .build()
    )


def quick_model() -> Any:
    """start -> end: an instance that completes in its start command."""
    return (
        ProcessBuilder("quick").start_event("start").end_event("end").chain("start", "end").build()
    )


def snapshot_compare(url: str) -> tuple[summaries.Summaries, summaries.Summaries]:
    """The summaries and the recount, read in one REPEATABLE READ snapshot."""
    with psycopg.connect(url) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        current = summaries.current(conn)
        counted = summaries.recount(conn)
        conn.rollback()
    return current, counted


def assert_exact(url: str) -> summaries.Summaries:
    current, counted = snapshot_compare(url)
    assert current.instances == counted.instances
    assert current.nodes == counted.nodes
    assert current.buckets == counted.buckets
    return counted


def no_live_tokens_in_ended_instances(url: str) -> int:
    """Live tokens of ended instances: none, so "live tokens" is what the console counted as
    active before (live tokens of instances not ended)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM token t JOIN process_instance p ON p.id = t.instance_id "
            "WHERE p.ended_at IS NOT NULL AND t.state NOT IN ('Completed', 'Terminated')"
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def summary_engine(database_url: str) -> Iterator[Engine]:
    with Engine(
        database_url, migrate=False, pool_size=12, settings=EngineSettings(default_retries=1)
    ) as engine:
        yield engine


class Race:
    """Random commands of every kind against `engine`; what they hit is picked from the rows."""

    def __init__(self, engine: Engine, cleaner: Engine, seed: int) -> None:
        self.engine = engine
        self.cleaner = cleaner
        self.random = random.Random(seed)
        self.done: dict[str, int] = {}
        self.cleaned = 0

    def pick(self, statement: str) -> Any:
        with self.engine.connection() as conn:
            row = conn.execute(statement + " ORDER BY random() LIMIT 1").fetchone()
        return None if row is None else row[0]

    def start(self) -> None:
        key = self.random.choice(["mixed", "mixed", "mixed", "quick", "guarded", "guarded"])
        self.engine.start_latest(key, {"fail": self.random.random() < 0.4})

    def complete_task(self) -> None:
        task = self.pick("SELECT id FROM user_task WHERE state = 'Open'")
        if task is not None:
            self.engine.complete_task(task)

    def external(self) -> None:
        for task in self.engine.fetch_and_lock(WORKER, {"ship": 60_000}, max_tasks=2):
            roll = self.random.random()
            if roll < 0.5:
                self.engine.complete_external_task(task["id"], WORKER)
            elif roll < 0.75:
                self.engine.fail_external_task(task["id"], WORKER, "down", retries=0)
            else:
                self.engine.fail_external_task(task["id"], WORKER, "slow", retries=1)

    def run_job(self) -> None:
        job = self.pick("SELECT id FROM job WHERE retries > 0 AND instance_id IS NOT NULL")
        if job is not None:
            self.engine.run_job(job)

    def incident(self) -> None:
        incident = self.pick("SELECT id FROM incident WHERE state = 'Open'")
        if incident is None:
            return
        if self.random.random() < 0.7:
            self.engine.retry_incident(incident)
        else:
            self.engine.resolve_incident(incident)

    def external_retries(self) -> None:
        task = self.pick("SELECT id FROM external_task WHERE state = 'Open' AND retries = 0")
        if task is not None:
            self.engine.set_external_task_retries(task, 1)

    def cancel(self) -> None:
        instance = self.pick("SELECT id FROM process_instance WHERE ended_at IS NULL")
        if instance is not None:
            self.engine.instance(instance).cancel()

    def modify(self) -> None:
        """Cancel one live token at a user task by a modification."""
        found = self.pick(
            "SELECT ARRAY[t.instance_id, t.id]::text[] FROM token t "
            "JOIN process_instance p ON p.id = t.instance_id "
            "WHERE p.ended_at IS NULL AND t.state = 'Waiting' "
            "AND t.node_id IN ('review', 'hold')"
        )
        if found is not None:
            instance, token = found
            self.engine.modify(instance, CancelToken(UUID(token)))

    def migrate(self) -> None:
        """Move one running instance of a guarded version to the other version."""
        found = self.pick(
            "SELECT ARRAY[p.id::text, p.definition_id, other.id]::text[] "
            "FROM process_instance p JOIN process_definition d ON d.id = p.definition_id "
            "JOIN process_definition other ON other.key = d.key AND other.id <> d.id "
            "WHERE p.ended_at IS NULL AND d.key = 'guarded'"
        )
        if found is not None:
            instance, source, target = found
            self.engine.migrate(self.engine.migration_plan(source, target), [instance])

    def cleanup(self) -> None:
        self.cleaned += self.cleaner.run(CleanupBatch()).instances

    def step(self) -> None:
        actions: list[tuple[Callable[[], None], int]] = [
            (self.start, 6),
            (self.complete_task, 4),
            (self.external, 4),
            (self.run_job, 4),
            (self.incident, 3),
            (self.external_retries, 1),
            (self.cancel, 2),
            (self.modify, 1),
            (self.migrate, 1),
            (self.cleanup, 1),
        ]
        action = self.random.choices([a for a, _ in actions], [w for _, w in actions])[0]
        try:
            action()
        except InterlockError:
            return  # a lost race (already completed, not found, locked by another worker)
        self.done[action.__name__] = self.done.get(action.__name__, 0) + 1


class Folders:
    """`count` threads folding every `interval` seconds until stopped."""

    def __init__(self, engine: Engine, count: int, interval: float) -> None:
        self.engine = engine
        self.stop = threading.Event()
        self.folded = 0
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self.loop, args=(interval,), daemon=True) for _ in range(count)
        ]

    def loop(self, interval: float) -> None:
        while not self.stop.wait(interval):
            try:
                self.folded += self.engine.run(FoldSummaries()).folded or 0
            except BaseException as exc:
                self.errors.append(exc)

    def __enter__(self) -> Folders:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)


def race_commands(
    engine: Engine,
    url: str,
    connections: int,
    commands: int,
    checks: int,
    seen: set[str] | None = None,
) -> dict[str, int]:
    """Race the commands; `seen` collects the instance states the mid-run checks counted, and
    whether they counted open incidents and visits ended canceled (per node), since the cleanup
    may have deleted every ended instance by the end."""
    engine.deploy(mixed_model())
    engine.deploy(quick_model())
    engine.deploy(guarded_model())
    engine.deploy(guarded_model("second version"))

    @engine.handler("charge")
    def charge(ctx: TaskContext) -> None:
        if ctx.variables.get("fail") and random.random() < 0.7:
            raise RuntimeError("card declined")

    retention = RetentionSettings(history_ttl_days=1, window=None, batch_size=20)
    errors: list[BaseException] = []
    done: dict[str, int] = {}
    with Engine(
        url,
        migrate=False,
        pool_size=2,
        clock=lambda: datetime.now(UTC) + timedelta(days=2),
        settings=EngineSettings(retention=retention),
    ) as cleaner:

        def run(seed: int) -> None:
            race = Race(engine, cleaner, seed)
            try:
                for _ in range(commands):
                    race.step()
            except BaseException as exc:
                errors.append(exc)
            for name, n in race.done.items():
                done[name] = done.get(name, 0) + n
            done["cleaned"] = done.get("cleaned", 0) + race.cleaned

        with Folders(engine, 2, 0.05) as folders:
            threads = [threading.Thread(target=run, args=(n,)) for n in range(connections)]
            for thread in threads:
                thread.start()
            while any(thread.is_alive() for thread in threads):
                # Mid-run: the summaries equal the recount in any one snapshot.
                if checks:
                    counted = assert_exact(url)
                    if seen is not None:
                        seen.update(state for _, state in counted.instances)
                        if any(n.open_incidents for n in counted.nodes.values()):
                            seen.add("open incidents")
                        seen.update(
                            f"canceled {node}"
                            for (_, node), n in counted.nodes.items()
                            if n.canceled_visits
                        )
                    checks -= 1
                time.sleep(0.5)
            for thread in threads:
                thread.join()
        assert errors == []
        assert folders.errors == []
    return done


def test_racing_commands_of_every_kind_keep_every_summary_exact(
    summary_engine: Engine, database_url: str
) -> None:
    seen: set[str] = set()
    done = race_commands(
        summary_engine, database_url, connections=4, commands=400, checks=6, seen=seen
    )

    assert done["cleaned"] > 0
    assert set(done) == {
        "cleaned",
        "start",
        "complete_task",
        "external",
        "run_job",
        "incident",
        "external_retries",
        "cancel",
        "modify",
        "migrate",
        "cleanup",
    }
    counted = assert_exact(database_url)
    summary_engine.run(FoldSummaries())
    assert assert_exact(database_url) == counted
    # Every kind of count took part.
    states = seen | {state for _, state in counted.instances}
    assert {"Active", "Completed"} <= states
    # Open incidents, in a checked snapshot mid-run or at the end (the race may retry or
    # cancel the last of them before it ends).
    assert "open incidents" in seen or any(n.open_incidents for n in counted.nodes.values())
    assert any(n.active_tokens for n in counted.nodes.values())
    assert any(n.completed_visits for n in counted.nodes.values())
    # Visits ended canceled, by a cancellation or a modification (review, hold) and by the
    # boundary timer's terminate end (the timer jobs run too).
    canceled = {f"canceled {node}" for (_, node), n in counted.nodes.items() if n.canceled_visits}
    assert {"canceled review", "canceled hold"} <= seen | canceled, seen | canceled
    assert any(incidents for _, _, incidents in counted.buckets.values())
    assert no_live_tokens_in_ended_instances(database_url) == 0


@pytest.mark.slow
def test_many_racing_commands_keep_every_summary_exact(
    summary_engine: Engine, database_url: str
) -> None:
    race_commands(summary_engine, database_url, connections=8, commands=1500, checks=20)

    assert_exact(database_url)
    summary_engine.run(FoldSummaries())
    assert_exact(database_url)
    assert no_live_tokens_in_ended_instances(database_url) == 0


def test_two_folders_beside_writers_lose_and_double_nothing(
    summary_engine: Engine, database_url: str
) -> None:
    summary_engine.deploy(quick_model())
    summary_engine.deploy(mixed_model())
    summary_engine.register_handler("charge", lambda ctx: None)

    def write(n: int) -> None:
        for i in range(40):
            summary_engine.start_latest("quick" if i % 2 else "mixed")

    with Folders(summary_engine, 2, 0.0) as folders:
        threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert folders.errors == []
    assert folders.folded > 0
    summary_engine.run(FoldSummaries())
    counted = assert_exact(database_url)
    assert counted.instances[(summary_engine.latest_definition("quick").id, "Completed")] == 60
    assert counted.instances[(summary_engine.latest_definition("mixed").id, "Active")] == 60
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM summary_delta").fetchone()
    assert row == (0,)


def test_data_modifying_ctes_on_one_table_fire_the_triggers_with_every_row(
    summary_engine: Engine, database_url: str
) -> None:
    """Several CTEs of one statement insert, update and delete rows of the same tables (as the
    engine's one-statement write does): the transition tables hold every row of each."""
    summary_engine.deploy(quick_model())
    instance = summary_engine.start_latest("quick")
    definition = summary_engine.latest_definition("quick").id
    with psycopg.connect(database_url) as conn:
        conn.execute(
            """
            WITH one AS (
                INSERT INTO history (id, instance_id, token_id, node_id, node_type, state,
                    started_at, ended_at)
                VALUES (gen_random_uuid(), %(i)s, gen_random_uuid(), 'x', 'task', 'Completed',
                    '2026-01-01 10:00:00+00', '2026-01-01 10:00:02.5+00')),
            two AS (
                INSERT INTO history (id, instance_id, token_id, node_id, node_type, state,
                    started_at)
                VALUES (gen_random_uuid(), %(i)s, gen_random_uuid(), 'x', 'task', 'Active',
                    '2026-01-01 10:00:00+00'),
                    (gen_random_uuid(), %(i)s, gen_random_uuid(), 'y', 'task', 'Active',
                    '2026-01-01 10:00:00+00')),
            ended AS (
                UPDATE history SET ended_at = started_at + interval '1 second'
                WHERE instance_id = %(i)s AND node_id = 'start'),
            gone AS (DELETE FROM history WHERE instance_id = %(i)s AND node_id = 'end'),
            tokens AS (
                INSERT INTO token (id, instance_id, node_id, state, mode, version, created_at,
                    updated_at)
                VALUES (gen_random_uuid(), %(i)s, 'x', 'Waiting', 'Forward', 0, now(), now())),
            more_tokens AS (
                INSERT INTO token (id, instance_id, node_id, state, mode, version, created_at,
                    updated_at)
                VALUES (gen_random_uuid(), %(i)s, 'x', 'Waiting', 'Forward', 0, now(), now()))
            SELECT 1
            """,
            {"i": instance.id},
        )
        conn.commit()
    counted = assert_exact(database_url)
    assert counted.nodes[(definition, "x")] == NodeCounts(2, 0, 2, 1, Decimal("2.5"), 0)
    assert counted.nodes[(definition, "y")] == NodeCounts(0, 0, 1, 0, Decimal(0), 0)
    assert (definition, "end") not in counted.nodes


def test_an_instance_moved_to_another_definition_takes_its_counts_in_either_order(
    summary_engine: Engine, database_url: str
) -> None:
    summary_engine.deploy(mixed_model())
    summary_engine.register_handler("charge", lambda ctx: None)
    old = summary_engine.latest_definition("mixed").id
    summary_engine.deploy(mixed_model("second version"))
    new = summary_engine.latest_definition("mixed").id
    assert new != old
    first = summary_engine.start_version("mixed", 1)
    second = summary_engine.start_version("mixed", 1)
    for tokens_first, instance in ((True, first), (False, second)):
        with psycopg.connect(database_url) as conn:
            move = "UPDATE process_instance SET definition_id = %s WHERE id = %s"
            touch = (
                "UPDATE token SET state = 'Completed' WHERE instance_id = %s AND node_id = 'review'"
            )
            if tokens_first:
                conn.execute(touch, (instance.id,))
                conn.execute(move, (new, instance.id))
            else:
                conn.execute(move, (new, instance.id))
                conn.execute(touch, (instance.id,))
            conn.commit()
        assert_exact(database_url)
    counted = assert_exact(database_url)
    assert (old, "Active") not in counted.instances
    assert counted.instances[(new, "Active")] == 2
    assert counted.nodes[(new, "review")].active_tokens == 0
    assert counted.nodes[(new, "ship")].active_tokens == 2
    assert not any(definition == old for definition, _ in counted.nodes)


def test_the_rebuild_writes_the_recount_and_keeps_later_deltas(
    summary_engine: Engine, database_url: str
) -> None:
    summary_engine.deploy(quick_model())
    for _ in range(3):
        summary_engine.start_latest("quick")
    with psycopg.connect(database_url) as conn:
        # Summaries gone wrong (a hand-made row and lost deltas) are rebuilt from the tables.
        conn.execute("DELETE FROM summary_delta")
        conn.execute("INSERT INTO instance_summary VALUES ('nowhere', 'Active', 7)")
        conn.commit()
    result = summary_engine.run(RebuildSummaries())
    assert (result.instance_rows, result.node_rows) == (1, 2)
    summary_engine.start_latest("quick")
    counted = assert_exact(database_url)
    definition = summary_engine.latest_definition("quick").id
    assert counted.instances == {(definition, "Completed"): 4}


def test_interlock_summaries_rebuild_recounts_from_the_command_line(
    summary_engine: Engine, database_url: str
) -> None:
    summary_engine.deploy(quick_model())
    summary_engine.start_latest("quick")
    with psycopg.connect(database_url) as conn:
        conn.execute("DELETE FROM summary_delta")
        conn.commit()
    assert snapshot_compare(database_url)[0].instances == {}

    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "summaries", "rebuild"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert "summaries rebuilt: 1 instance, 2 node and 1 activity rows" in done.stdout
    counted = assert_exact(database_url)
    assert counted.instances == {(summary_engine.latest_definition("quick").id, "Completed"): 1}


def test_the_folder_thread_folds_until_stopped(summary_engine: Engine, database_url: str) -> None:
    summary_engine.deploy(quick_model())
    folder = Folder(summary_engine, interval=0.05)
    folder.start()
    try:
        for _ in range(5):
            summary_engine.start_latest("quick")
        deadline = time.monotonic() + 10
        left: Any = None
        while time.monotonic() < deadline:
            with psycopg.connect(database_url) as conn:
                left = conn.execute("SELECT count(*) FROM summary_delta").fetchone()
            if left == (0,):
                break
            time.sleep(0.05)
        assert left == (0,)
    finally:
        assert folder.stop(5)
    assert not folder.running
    counted = assert_exact(database_url)
    definition = summary_engine.latest_definition("quick").id
    assert counted.instances == {(definition, "Completed"): 5}
    with psycopg.connect(database_url) as conn:
        base = conn.execute("SELECT instances FROM instance_summary").fetchall()
    assert base == [(5,)]
