"""Webhooks over HTTP: subscriptions in /api/v1 and the console (create, read, change, delete,
validation naming the field, roles), the secret never shown or logged, and dead letters parked by
a failing receiver and replayed from the console once it works again."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from engine.db.database import connect_url_for
from engine.webhooks.dispatcher import Dispatcher
from tests.api import processes
from tests.api.test_openapi import validate
from tests.api.test_sessions import Browser
from tests.server import LiveServer, live_server
from tests.webhooks.conftest import FAST, SECRET
from tests.webhooks.receiver import Receiver, verify

OTHER_SECRET = "another-secret-of-16+"


@pytest.fixture(scope="module")
def api(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[LiveServer]:
    """A server of this module's own without a job executor or dispatcher: the tests run the
    dispatcher themselves, with short retries."""
    name = f"test_hooks_{uuid.uuid4().hex[:10]}"
    admin_connection.execute(
        sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template_database)
        )
    )
    try:
        with live_server(connect_url_for(pg_server, name), run_jobs=False) as server:
            server.engine.deploy(*processes.ALL, name="webhook tests")
            yield server
    finally:
        admin_connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def browser(api: LiveServer) -> Iterator[Callable[[str], Browser]]:
    made: list[Browser] = []

    def make(role: str) -> Browser:
        opened = Browser(api.url, role)
        made.append(opened)
        return opened

    yield make
    for opened in made:
        opened.close()


def create(client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"name": "orders", "url": "https://example.com/hook", "secret": SECRET, **fields}
    return client.post("/webhooks", json=body)


def subscription_count(api: LiveServer) -> int:
    with api.engine.connection() as conn:
        row = conn.execute("SELECT count(*) FROM webhook_subscription").fetchone()
    assert row is not None
    return int(row[0])


def test_crud_never_shows_the_secret(
    admin: httpx.Client, viewer: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    made = create(admin, event_types=["instance.started"], definition_key="review")
    assert made.status_code == 201, made.text
    shown = made.json()
    assert SECRET not in made.text
    assert {k: shown[k] for k in ("name", "url", "event_types", "definition_key")} == {
        "name": "orders",
        "url": "https://example.com/hook",
        "event_types": ["instance.started"],
        "definition_key": "review",
    }
    assert (shown["enabled"], shown["has_secret"]) == (True, True)
    assert shown["deliveries"] == {"pending": 0, "delivered": 0, "dead": 0, "failing": 0}
    hook = shown["id"]

    listed = viewer.get("/webhooks")
    assert listed.status_code == 200
    assert hook in [s["id"] for s in listed.json()["items"]]
    one = viewer.get(f"/webhooks/{hook}")
    assert one.status_code == 200
    assert one.json()["name"] == "orders"

    changed = admin.post(
        f"/webhooks/{hook}",
        json={
            "name": "orders v2",
            "secret": OTHER_SECRET,
            "definition_key": None,
            "enabled": False,
        },
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["name"], changed.json()["definition_key"]) == ("orders v2", None)
    assert changed.json()["enabled"] is False
    assert changed.json()["event_types"] == ["instance.started"]
    deliveries = viewer.get(f"/webhooks/{hook}/deliveries", params={"state": "dead"})
    assert deliveries.status_code == 200
    assert deliveries.json() == {"items": [], "next": None}

    for answer in (listed, one, changed, deliveries):
        assert SECRET not in answer.text and OTHER_SECRET not in answer.text
    assert SECRET not in caplog.text and OTHER_SECRET not in caplog.text

    assert admin.delete(f"/webhooks/{hook}").status_code == 204
    gone = viewer.get(f"/webhooks/{hook}")
    assert gone.status_code == 404
    assert admin.delete(f"/webhooks/{hook}").status_code == 404


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "javascript:alert(1)"}, "url"),
        ({"url": "https://"}, "url"),
        ({"url": "http://example.com:99999/"}, "url"),
        ({"url": 5}, "url"),
        ({"secret": "short"}, "secret"),
        ({"secret": None}, "secret"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"event_types": ["instance.exploded"]}, "event_types"),
        ({"event_types": "instance.started"}, "event_types"),
        ({"enabled": "yes"}, "enabled"),
        ({"definition_key": ["a"]}, "definition_key"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_subscription_is_a_400_naming_the_field(
    api: LiveServer, admin: httpx.Client, fields: dict[str, Any], field: str
) -> None:
    before = subscription_count(api)
    answer = create(admin, **fields)
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"]["field"] == field
    assert subscription_count(api) == before


def test_a_bad_change_is_a_400_and_changes_nothing(
    admin: httpx.Client, viewer: httpx.Client
) -> None:
    hook = create(admin).json()["id"]
    before = viewer.get(f"/webhooks/{hook}").json()
    answer = admin.post(f"/webhooks/{hook}", json={"name": "renamed", "url": "mailto:x@y"})
    assert answer.status_code == 400
    assert answer.json()["detail"]["field"] == "url"
    assert viewer.get(f"/webhooks/{hook}").json() == before
    unknown = admin.post(f"/webhooks/{uuid.uuid4()}", json={"name": "x"})
    assert unknown.status_code == 404


def test_viewers_read_operators_replay_admins_manage(
    admin: httpx.Client, operator: httpx.Client, viewer: httpx.Client
) -> None:
    for client in (viewer, operator):
        refused = create(client)
        assert refused.status_code == 403, refused.text
    hook = create(admin).json()["id"]
    for client in (viewer, operator):
        assert client.post(f"/webhooks/{hook}", json={"name": "mine"}).status_code == 403
        assert client.delete(f"/webhooks/{hook}").status_code == 403
    assert viewer.post(f"/webhooks/{hook}/replay").status_code == 403
    replayed = operator.post(f"/webhooks/{hook}/replay")
    assert replayed.status_code == 200
    assert replayed.json() == {"subscription_id": hook, "replayed": 0}
    assert viewer.get(f"/webhooks/{hook}").json()["name"] == "orders"


def test_console_manages_subscriptions_with_csrf_and_roles(
    api: LiveServer, browser: Callable[[str], Browser]
) -> None:
    admin, viewer = browser("admin"), browser("viewer")
    before = subscription_count(api)
    form = {
        "name": "console hook",
        "url": "http://127.0.0.1:9/hook",
        "secret": SECRET,
        "event_types": ["instance.started", "instance.completed"],
        "enabled": "on",
    }
    forged = admin.post("/webhooks", data=form, headers={"X-CSRF-Token": "wrong"})
    assert forged.status_code == 403
    assert viewer.post("/webhooks", data=form).status_code == 403
    assert subscription_count(api) == before

    bad = admin.post("/webhooks", data={**form, "url": "file:///etc/passwd"})
    assert bad.status_code == 400
    assert "url" in bad.text
    assert subscription_count(api) == before

    made = admin.post("/webhooks", data=form)
    assert made.status_code == 200, made.text
    assert "created" in made.text
    listing = viewer.get("/webhooks")
    assert listing.status_code == 200
    assert "console hook" in listing.text
    assert "New subscription" not in listing.text  # the form is for admins
    hook = next(
        s["id"]
        for s in httpx.get(f"{api.url}/api/v1/webhooks", headers=api.bearer("viewer")).json()[
            "items"
        ]
        if s["name"] == "console hook"
    )
    page = admin.get(f"/webhooks/{hook}")
    assert page.status_code == 200
    assert "instance.completed, instance.started" in page.text
    assert 'type="password"' in page.text
    for shown in (listing, page, made):
        assert SECRET not in shown.text

    saved = admin.post(f"/webhooks/{hook}", data={**form, "name": "renamed hook", "secret": ""})
    assert saved.status_code == 200, saved.text
    assert "renamed hook" in admin.get(f"/webhooks/{hook}").text
    assert viewer.post(f"/webhooks/{hook}/delete").status_code == 403
    assert admin.post(f"/webhooks/{hook}/delete").status_code == 200
    assert admin.get(f"/webhooks/{hook}").status_code == 404


def test_dead_letters_replayed_from_the_console_are_delivered(
    api: LiveServer, admin: httpx.Client, browser: Callable[[str], Browser], receiver: Receiver
) -> None:
    receiver.always_fail = True
    made = create(
        admin, url=receiver.url, event_types=["instance.started"], definition_key="straight"
    )
    hook = made.json()["id"]
    engine = api.engine
    first, second = engine.start_latest("straight"), engine.start_latest("straight")
    settings = replace(FAST, max_attempts=2, backoff_base_seconds=0.01, backoff_cap_seconds=0.02)
    dispatcher = Dispatcher(engine, settings)
    try:
        for _ in range(50):
            dispatcher.run_once()
            if admin.get(f"/webhooks/{hook}").json()["deliveries"]["dead"] == 2:
                break
        counts = admin.get(f"/webhooks/{hook}").json()["deliveries"]
        assert counts == {"pending": 0, "delivered": 0, "dead": 2, "failing": 0}
        assert len(receiver.received) == 4  # two attempts each
        listed = admin.get(f"/webhooks/{hook}/deliveries", params={"state": "dead"})
        doc = admin.get("/openapi.json").json()
        validate(doc, "get", "/webhooks/{id}/deliveries", listed)
        validate(doc, "get", "/webhooks/{id}", admin.get(f"/webhooks/{hook}"))
        validate(doc, "get", "/webhooks", admin.get("/webhooks"))
        validate(doc, "post", "/webhooks", made)
        validate(doc, "post", "/webhooks", create(admin, url="gopher://x"))
        dead = listed.json()["items"]
        assert {d["instance_id"] for d in dead} == {str(first.id), str(second.id)}
        assert {d["last_status"] for d in dead} == {"HTTP 500"}

        operator, viewer = browser("operator"), browser("viewer")
        page = operator.get(f"/webhooks/{hook}")
        assert page.status_code == 200
        assert "Replay all dead letters" in page.text
        assert f"/deliveries/{dead[0]['id']}/replay" in page.text
        assert "Replay all dead letters" not in viewer.get(f"/webhooks/{hook}").text
        assert viewer.post(f"/webhooks/{hook}/replay").status_code == 403
        forged = operator.post(f"/webhooks/{hook}/replay", headers={"X-CSRF-Token": "no"})
        assert forged.status_code == 403

        receiver.always_fail = False
        one = operator.post(f"/webhooks/{hook}/deliveries/{dead[0]['id']}/replay")
        assert one.status_code == 200, one.text
        again = operator.post(f"/webhooks/{hook}/deliveries/{dead[0]['id']}/replay")
        assert again.status_code == 409  # no longer a dead letter
        rest = operator.post(f"/webhooks/{hook}/replay")
        assert rest.status_code == 200
        assert "Replaying 1 dead letter." in rest.text
        nothing = admin.post(f"/webhooks/{hook}/replay")
        validate(doc, "post", "/webhooks/{id}/replay", nothing)
        assert nothing.json() == {"subscription_id": hook, "replayed": 0}
        changed = admin.post(f"/webhooks/{hook}", json={"name": "renamed"})
        validate(doc, "post", "/webhooks/{id}", changed)
        for _ in range(50):
            dispatcher.run_once()
            if admin.get(f"/webhooks/{hook}").json()["deliveries"]["delivered"] == 2:
                break
    finally:
        dispatcher.stop()
    counts = admin.get(f"/webhooks/{hook}").json()["deliveries"]
    assert counts == {"pending": 0, "delivered": 2, "dead": 0, "failing": 0}
    accepted = receiver.first_acceptances()
    assert sorted(r.body["instance_id"] for r in accepted) == sorted(
        [str(first.id), str(second.id)]
    )
    assert {r.delivery_id for r in accepted} == {d["id"] for d in dead}
    assert all(verify(SECRET, r) for r in receiver.received)


SECRET_URL = "https://hookuser:hookpass@hooks.example/in?token=tok-123&team=ops#frag-9x"
MASKED_URL = "https://***:***@hooks.example/in?token=***&team=***#***"


def test_only_admins_see_a_url_whole_in_the_api_the_console_and_the_audit_log(
    api: LiveServer,
    admin: httpx.Client,
    operator: httpx.Client,
    viewer: httpx.Client,
    browser: Callable[[str], Browser],
) -> None:
    made = create(admin, name="masked hook", url=SECRET_URL)
    assert made.status_code == 201, made.text
    assert made.json()["url"] == SECRET_URL
    hook = made.json()["id"]
    assert admin.get(f"/webhooks/{hook}").json()["url"] == SECRET_URL
    listed = [s for s in admin.get("/webhooks").json()["items"] if s["id"] == hook]
    assert listed[0]["url"] == SECRET_URL

    secrets = ("hookuser", "hookpass", "tok-123", "frag-9x")
    for client in (viewer, operator):
        one = client.get(f"/webhooks/{hook}")
        assert one.json()["url"] == MASKED_URL
        every = client.get("/webhooks")
        assert [s["url"] for s in every.json()["items"] if s["id"] == hook] == [MASKED_URL]
        for answer in (one, every):
            assert not any(secret in answer.text for secret in secrets), answer.text
    validate(
        admin.get("/openapi.json").json(), "get", "/webhooks/{id}", viewer.get(f"/webhooks/{hook}")
    )

    console_viewer, console_admin = browser("viewer"), browser("admin")
    for path in ("/webhooks", f"/webhooks/{hook}", "/webhooks?fragment=1"):
        page = console_viewer.get(path)
        assert page.status_code == 200
        assert "masked hook" in page.text
        assert not any(secret in page.text for secret in secrets), path
    assert (
        "https://***:***@hooks.example/in?token=***&amp;team=***#***"
        in console_viewer.get(f"/webhooks/{hook}").text
    )
    admin_page = console_admin.get(f"/webhooks/{hook}").text
    assert "hookpass" in admin_page and "tok-123" in admin_page

    with api.engine.connection() as conn:
        entries = conn.execute(
            "SELECT a::text FROM audit_entry a WHERE entity_id = %s", (f"webhook:{hook}",)
        ).fetchall()
    assert len(entries) == 1
    assert "token=***" in entries[0][0]
    assert not any(secret in entries[0][0] for secret in secrets)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://2130706433/hook",
        "http://0x7f000001/hook",
        "http://017700000001/hook",
        "http://127.1/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[::1]:8080/hook",
        "http://localhost/hook",
        "http://10.0.0.5/hook",
        "http://192.168.1.20/hook",
        "http://169.254.10.10/hook",
        "http://[fe80::1]/hook",
        "http://0.0.0.0/hook",
    ],
)
def test_a_literal_address_that_is_not_public_is_a_400_naming_the_url_unless_allowed(
    api: LiveServer, admin: httpx.Client, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS")
    before = subscription_count(api)
    refused = create(admin, url=url)
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"]["field"] == "url"
    assert "INTERLOCK_WEBHOOK_ALLOWED_NETWORKS" in refused.text
    assert subscription_count(api) == before
    hook = create(admin).json()["id"]
    changed = admin.post(f"/webhooks/{hook}", json={"url": url})
    assert changed.status_code == 400 and changed.json()["detail"]["field"] == "url"

    monkeypatch.setenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", "0.0.0.0/0,::/0")
    allowed = create(admin, url=url)
    assert allowed.status_code == 201, allowed.text


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA/computeMetadata/v1/",
        "http://[::ffff:169.254.169.254]/",
    ],
)
def test_metadata_services_are_refused_even_when_every_network_is_allowed(
    api: LiveServer, admin: httpx.Client, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", "0.0.0.0/0,::/0")
    refused = create(admin, url=url)
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"]["field"] == "url"
    assert "cloud metadata" in refused.text
