"""The console's migration page: an admin edits the plan, validates the selection and migrates
it; viewers and operators see no controls, and a POST without the admin role or the CSRF token
is refused before anything is written."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from html import unescape
from urllib.parse import quote

import pytest

from app.console import migration as migration_page
from engine.api import Engine
from engine.builder import ProcessBuilder
from tests.api.test_sessions import Browser
from tests.server import LiveServer


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False) as running:
        yield running


@pytest.fixture
def clients(server: LiveServer) -> Iterator[Callable[[str], Browser]]:
    """A console client logged in as the role named, closed after the test."""
    made: list[Browser] = []

    def make(name: str) -> Browser:
        made.append(Browser(server.url, name))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _deploy(engine: Engine) -> tuple[str, str]:
    v1 = ProcessBuilder("page_mig").start_event("s").user_task("review").end_event("e")
    v2 = (
        ProcessBuilder("page_mig")
        .start_event("s")
        .user_task("review", "Review v2")
        .user_task("check")
        .end_event("e")
    )
    engine.deploy(v1.chain("s", "review", "e").build())
    source = engine.latest_definition("page_mig").id
    engine.deploy(v2.chain("s", "review", "check", "e").build())
    return source, engine.latest_definition("page_mig").id


def _form(source: str, target: str, **extra: str) -> dict[str, str]:
    return {
        "source": source,
        "target": target,
        "target:s": "s",
        "target:review": "review",
        "target:e": "e",
        **extra,
    }


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_only_an_admin_sees_the_controls_and_may_post(
    clients: Callable[[str], Browser], engine: Engine
) -> None:
    source, target = _deploy(engine)
    instance = engine.start_version("page_mig", 1)
    admin, operator, viewer = (clients(n) for n in ("admin", "operator", "viewer"))
    page = f"/definitions/page_mig/migrate?source={source}&target={target}"
    for reader in (operator, viewer):
        shown = reader.get(page)
        assert shown.status_code == 200
        assert 'name="target:review"' not in shown.text and "migration-run" not in shown.text
        assert "migrate-link" not in reader.get("/definitions/page_mig?version=1").text
        refused = reader.post("/definitions/page_mig/migrate/run", data=_form(source, target))
        assert refused.status_code == 403
    shown = admin.get(page)
    assert 'name="target:review"' in shown.text and 'id="migration-run"' in shown.text
    assert shown.text.count("data-diagram-static") == 2
    assert "migrate-link" in admin.get("/definitions/page_mig?version=1").text
    forged = admin.post(
        "/definitions/page_mig/migrate/run",
        data=_form(source, target),
        headers={"X-CSRF-Token": "forged"},
    )
    assert forged.status_code == 403
    assert engine.instance(instance.id).info().definition_id == source


def test_an_admin_validates_then_migrates_the_filtered_instances(
    clients: Callable[[str], Browser], engine: Engine
) -> None:
    source, target = _deploy(engine)
    chosen = engine.start_version("page_mig", 1, business_key="pick-me")
    other = engine.start_version("page_mig", 1, business_key="leave-me")
    admin = clients("admin")

    dropped = {k: v for k, v in _form(source, target).items() if k != "target:review"}
    report = admin.post("/definitions/page_mig/migrate/validate", data=dropped)
    assert report.status_code == 200, report.text
    assert 'data-valid="false"' in report.text and 'data-count="2"' in report.text
    assert "2 running instances match now: 0 can be migrated, 2 would be refused" in _text(
        report.text
    )
    refusals = report.text[report.text.index("migration-refusals") :]
    assert "token at 'review': 'review' is not mapped by the plan" in _text(refusals)
    assert '<tr data-count="2">' in refusals
    assert str(chosen.id) in report.text and str(other.id) in report.text  # the sample

    none = admin.post(
        "/definitions/page_mig/migrate/validate", data=_form(source, target, incident="yes")
    )
    assert "No running instance of the source version matches the filters" in none.text

    narrowed = _form(source, target, business_key="pick-me", incident="no")
    report = admin.post("/definitions/page_mig/migrate/validate", data=narrowed)
    assert "1 running instance matches now: 1 can be migrated" in _text(report.text)
    assert 'data-valid="true"' in report.text

    # The operator confirmed one instance: a selection that matches another number runs nothing.
    stale = admin.post("/definitions/page_mig/migrate/run", data={**narrowed, "expected": "2"})
    assert stale.status_code == 400
    assert "the selection matches 1 instance now, not the 2 confirmed" in _text(stale.text)
    assert engine.instance(chosen.id).info().definition_id == source
    done = admin.post("/definitions/page_mig/migrate/run", data={**narrowed, "expected": "1"})
    assert done.status_code == 200, done.text
    assert 'data-migrated="1" data-refused="0"' in done.text
    assert engine.instance(chosen.id).info().definition_id == target
    assert engine.instance(other.id).info().definition_id == source
    with engine.connection() as conn:
        entries = conn.execute(
            "SELECT user_id, channel, operation FROM audit_entry WHERE instance_id = %s",
            (chosen.id,),
        ).fetchall()
    assert entries == [("admin", "console", "Migrate")]

    bad = admin.post(
        "/definitions/page_mig/migrate/run", data=_form(source, target, instances="nope")
    )
    assert bad.status_code == 400 and "'nope' is not an instance id" in _text(bad.text)
    bad = admin.post(
        "/definitions/page_mig/migrate/run", data={**_form(source, target), "expected": "many"}
    )
    assert bad.status_code == 400 and "expected must be a number" in _text(bad.text)


def test_the_page_of_one_instance_and_the_version_it_offers(
    clients: Callable[[str], Browser], engine: Engine
) -> None:
    source, target = _deploy(engine)
    admin = clients("admin")
    # From the latest version with no other version running: the page says so.
    shown = admin.get(f"/definitions/page_mig/migrate?source={target}")
    assert shown.status_code == 200 and 'id="migration-none"' in shown.text
    assert 'id="migrate-none"' in admin.get("/definitions/page_mig?version=2").text
    instance = engine.start_version("page_mig", 1)
    shown = admin.get(f"/definitions/page_mig/migrate?source={target}")
    assert "version 1 to version 2" in _text(shown.text) and "migration-none" not in shown.text
    link = admin.get("/definitions/page_mig?version=2").text
    assert f"migrate?source={quote(source)}&amp;target={quote(target)}" in link
    alone = admin.get(f"/definitions/page_mig/migrate?instance={instance.id}")
    assert alone.status_code == 200
    assert f"Migrating one instance: {instance.id}" in _text(alone.text)
    assert f'name="instance" value="{instance.id}"' in alone.text
    bad = admin.get("/definitions/page_mig/migrate?instance=nope")
    assert bad.status_code == 400 and "'nope' is not an instance id" in _text(bad.text)
    other = ProcessBuilder("page_mig_other").start_event("s").user_task("t").end_event("e")
    engine.deploy(other.chain("s", "t", "e").build())
    stranger = engine.start_latest("page_mig_other")
    missing = admin.get(f"/definitions/page_mig/migrate?instance={stranger.id}")
    assert missing.status_code == 404


def _batch_state(engine: Engine, batch_id: str) -> tuple[str, int, int, int, str]:
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT state, total, done, failed, type FROM batch WHERE id = %s", (batch_id,)
        ).fetchone()
    assert row is not None
    return (row[0], row[1], row[2], row[3], row[4])


def test_an_admin_migrates_more_than_a_submission_holds_as_a_batch(
    clients: Callable[[str], Browser], engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migration_page, "MAX_INSTANCES", 2)
    source, target = _deploy(engine)
    instances = [engine.start_version("page_mig", 1) for _ in range(3)]
    admin, operator = clients("admin"), clients("operator")
    path = "/definitions/page_mig/migrate/batch"
    assert "Migrate as a batch" in admin.get("/definitions/page_mig/migrate").text
    assert "migration-batch" not in operator.get("/definitions/page_mig/migrate").text
    assert operator.post(path, data=_form(source, target)).status_code == 403
    forged = admin.post(path, data=_form(source, target), headers={"X-CSRF-Token": "forged"})
    assert forged.status_code == 403
    too_many = admin.post("/definitions/page_mig/migrate/run", data=_form(source, target))
    assert too_many.status_code == 400
    assert "more than 2 instances are selected" in _text(too_many.text)
    invalid = admin.post(path, data={**_form(source, target), "target:review": "nope"})
    assert invalid.status_code == 400
    assert "the migration plan is invalid" in _text(invalid.text) and "nope" in invalid.text
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM batch").fetchone() == (0,)

    created = admin.post(path, data=_form(source, target))
    assert created.status_code == 200, created.text
    batch_id = created.headers["HX-Redirect"].removeprefix("/batches/")
    assert created.headers["HX-Redirect"] == f"/batches/{batch_id}"
    deadline = time.monotonic() + 30
    while _batch_state(engine, batch_id)[0] != "Completed":
        assert time.monotonic() < deadline, _batch_state(engine, batch_id)
        time.sleep(0.05)
    assert _batch_state(engine, batch_id) == ("Completed", 3, 3, 0, "migrate")
    for instance in instances:
        assert engine.instance(instance.id).info().definition_id == target
    with engine.connection() as conn:
        entries = conn.execute(
            "SELECT user_id, channel, operation FROM audit_entry WHERE batch_id = %s",
            (batch_id,),
        ).fetchall()
    assert entries == [("admin", "batch", "Migrate")] * 3
    assert "Migrate instances" in admin.get(f"/batches/{batch_id}").text
