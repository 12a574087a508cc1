"""Set variables on 5,000 instances from the console's instance filter, with the job executor
process SIGKILLed once mid-run: the preview showed 5,000 and the confirm button carried it;
after a new executor finishes, every instance was changed exactly once (one batch item done and
one audit entry each, with the values before and after) and holds the new values, and the
instance outside the filter is untouched."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder
from tests.api.test_sessions import Browser
from tests.engine.batches import batch_row
from tests.server import live_server
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
COUNT = 5000
KEY = "bulk-set"


def _executor(database_url: str) -> subprocess.Popen[bytes]:
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.engine.batch_executor", database_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    assert worker.stdout.readline().strip() == b"ready"
    return worker


def _kill(worker: subprocess.Popen[bytes]) -> None:
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    assert worker.stdout is not None
    worker.stdout.close()


def _start(engine: Engine) -> list[UUID]:
    engine.deploy(
        ProcessBuilder(KEY)
        .start_event("start")
        .user_task("review")
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )

    def one(n: int) -> UUID:
        return engine.start_latest(KEY, {"stage": "old", "scratch": n}).id

    with ThreadPoolExecutor(6) as pool:
        return list(pool.map(one, range(COUNT)))


def test_five_thousand_instances_get_their_variables_once_across_a_killed_executor(
    database_url: str,
) -> None:
    with live_server(database_url, run_jobs=False) as server:
        engine = server.engine
        instances = _start(engine)
        engine.deploy(
            ProcessBuilder("bulk-other")
            .start_event("start")
            .user_task("review")
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
        outside = engine.start_latest("bulk-other", {"stage": "old"})
        operator = Browser(server.url, "operator")
        try:
            preview = operator.get(
                f"/instances/batch-preview?definition={KEY}&action=set-variables"
            )
            assert preview.status_code == 200, preview.text
            assert f'data-count="{COUNT}"' in preview.text
            assert "Set variables on 5,000 instances" in preview.text
            assert f'name="confirmed" value="{COUNT}"' in preview.text
            created = operator.post(
                "/instances/batch-set-variables",
                data={
                    "definition": KEY,
                    "confirmed": str(COUNT),
                    "set_name_0": "stage",
                    "set_type_0": "string",
                    "set_value_0": "reviewed",
                    "set_name_1": "limit",
                    "set_type_1": "long",
                    "set_value_1": "2500",
                    "remove": "scratch",
                },
            )
            assert created.status_code == 200, created.text
            found = re.fullmatch(r"/batches/([0-9a-f-]{36})", created.headers["HX-Redirect"])
            assert found
            batch_id = found.group(1)
        finally:
            operator.close()
        assert batch_row(engine, batch_id)[:3] == ("Running", COUNT, 0)

        worker = _executor(database_url)
        wait_until(
            lambda: int(batch_row(engine, batch_id)[2]) >= COUNT // 3,
            "a third of the batch done",
            timeout=300,
        )
        _kill(worker)
        after_kill = int(batch_row(engine, batch_id)[2])
        assert 0 < after_kill < COUNT, after_kill
        worker = _executor(database_url)  # takes the job over once the killed lock expires
        try:
            wait_until(
                lambda: batch_row(engine, batch_id)[0] == "Completed",
                "the batch completed",
                timeout=300,
            )
        finally:
            _kill(worker)

        assert batch_row(engine, batch_id) == ("Completed", COUNT, COUNT, 0, "operator", True)
        with engine.connection() as conn:
            entries = conn.execute(
                "SELECT instance_id, operation, user_id, channel, before, after "
                "FROM audit_entry WHERE batch_id = %s",
                (UUID(batch_id),),
            ).fetchall()
            items = conn.execute(
                "SELECT state, count(*) FROM batch_item WHERE batch_id = %s GROUP BY state",
                (UUID(batch_id),),
            ).fetchall()
            values = conn.execute(
                "SELECT name, value, count(*) FROM variable WHERE instance_id = ANY(%s) "
                "AND scope_key = '' GROUP BY name, value ORDER BY name",
                (instances,),
            ).fetchall()
            created_entry = conn.execute(
                "SELECT details FROM audit_entry WHERE entity_id = %s AND operation = %s",
                (batch_id, "CreateBatch"),
            ).fetchone()
        # Exactly once: one audit entry per instance, each item done on its first attempt that
        # committed (the killed chunk's work rolled back with it).
        per_instance = Counter(row[0] for row in entries)
        assert set(per_instance) == set(instances)
        assert set(per_instance.values()) == {1}
        assert {(row[1], row[2], row[3]) for row in entries} == {
            ("ModifyVariable", "operator", "batch")
        }
        by_instance = {row[0]: row for row in entries}
        sample = instances[1234]
        assert by_instance[sample][4] == {"stage": "old", "scratch": 1234}
        assert by_instance[sample][5] == {"stage": "reviewed", "limit": 2500}
        assert items == [("Done", COUNT)]
        assert values == [("limit", 2500, COUNT), ("stage", "reviewed", COUNT)]
        assert created_entry is not None
        assert created_entry[0]["confirmed"] == COUNT and created_entry[0]["total"] == COUNT
        assert engine.instance(outside.id).variables() == {"stage": "old"}
