"""The guards of a webhook POST against real receivers on 127.0.0.1: destinations that are not
public are refused (in any spelling, judged on the resolved address, which is then the one
connected to) unless allowed; a receiver that drips its answer is cut off at the deadline; an
endless answer is read up to a cap; redirects are not followed."""

from __future__ import annotations

import socket
from dataclasses import replace
from ipaddress import ip_address
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.commands.webhooks import ReplayDeadLetters
from engine.queries import webhooks as reads
from engine.states import DeliveryState
from engine.webhooks import urls
from engine.webhooks.dispatcher import Dispatcher
from engine.webhooks.settings import WebhookSettings, parse_networks
from tests.waiting import wait_until
from tests.webhooks.conftest import FAST, two_steps
from tests.webhooks.receiver import DRIP_BYTES, Receiver
from tests.webhooks.test_delivery import delivery_states, subscribe

EVERYWHERE = parse_networks("0.0.0.0/0,::/0")

REFUSED = [
    "127.0.0.1",
    "127.255.0.9",
    "::1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "fc00::1",
    "fd12:3456::1",
    "169.254.1.1",
    "fe80::1",
    "0.0.0.0",
    "::",
    "100.64.0.1",
    "224.0.0.1",
    "ff02::1",
    "255.255.255.255",
    "192.0.2.10",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "64:ff9b::a9fe:101",
    "2002:7f00:1::",
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
METADATA = ["169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "100.100.100.200"]


@pytest.mark.parametrize("address", REFUSED)
def test_addresses_that_are_not_public_are_refused_unless_allowed(address: str) -> None:
    parsed = ip_address(address)
    assert urls.refusal(parsed, ()) is not None
    assert urls.refusal(parsed, EVERYWHERE) is None
    assert urls.refusal(parsed, parse_networks("203.0.113.0/24,2001:db8::/32")) is not None


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    assert urls.refusal(ip_address(address), ()) is None


@pytest.mark.parametrize("address", METADATA)
def test_metadata_addresses_and_names_are_refused_whatever_is_allowed(address: str) -> None:
    refused = urls.refusal(ip_address(address), EVERYWHERE)
    assert refused is not None and "metadata" in refused
    for name in ("metadata.google.internal", "METADATA.google.internal.", "metadata"):
        with pytest.raises(urls.Refused, match="metadata"):
            urls.resolve(name, 80, EVERYWHERE)
        assert urls.check_registered(name, EVERYWHERE) is not None


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", " 10.0.0.0/8, ::1 ,")
    allowed = WebhookSettings.from_env().allowed_networks
    assert [str(n) for n in allowed] == ["10.0.0.0/8", "::1/128"]
    monkeypatch.setenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", "10.0.0.0/8,intranet")
    with pytest.raises(ValueError, match="'intranet'"):
        WebhookSettings.from_env()
    monkeypatch.delenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS")
    assert WebhookSettings.from_env().allowed_networks == ()


def run_until(dispatcher: Dispatcher, condition: Any, what: str, timeout: float = 30) -> None:
    wait_until(lambda: (dispatcher.run_once(), condition())[1], what, timeout)


SPELLINGS = [
    "127.0.0.1",
    "2130706433",
    "0x7f000001",
    "017700000001",
    "127.1",
    "[::ffff:127.0.0.1]",
    "localhost",
]


def test_without_the_setting_a_loopback_receiver_is_refused_in_every_spelling_and_never_reached(
    engine: Engine, receiver: Receiver
) -> None:
    # Registered while allowed (the suite allows loopback); delivered by a dispatcher that is not.
    hooks = {
        spelling: subscribe(
            engine, f"http://{spelling}:{receiver.port}/hook", event_types=("instance.started",)
        )
        for spelling in SPELLINGS
    }
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    refusing = Dispatcher(engine, replace(FAST, allowed_networks=(), max_attempts=1))
    run_until(
        refusing,
        lambda: all(delivery_states(engine, h) == {"dead": 1} for h in hooks.values()),
        "every delivery to be refused",
    )
    refusing.stop()
    assert receiver.received == []
    for spelling, hook in hooks.items():
        (dead,) = reads.deliveries(engine, hook, DeliveryState.DEAD)
        status = dead.last_status or ""
        assert status.startswith("refused: "), (spelling, status)
        assert "loopback" in status and urls.SETTING in status, (spelling, status)

    # The same deliveries once allowed reach the receiver: it was there all along.
    numeric = ["2130706433", "0x7f000001", "017700000001", "127.1"]
    for spelling in numeric:
        engine.run(ReplayDeadLetters(hooks[spelling]))
    allowing = Dispatcher(engine, FAST)
    run_until(allowing, lambda: len(receiver.accepted()) == len(numeric), "the allowed ones")
    allowing.stop()
    assert {UUID(r.body["subscription_id"]) for r in receiver.accepted()} == {
        hooks[s] for s in numeric
    }


def test_the_address_checked_is_the_one_connected_to(
    engine: Engine, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that answers an allowed address first and a forbidden one afterwards (DNS
    rebinding) is looked up once per attempt: the connection goes to the address checked."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.rebind.test":
            lookups.append(host)
            host = "127.0.0.1" if len(lookups) == 1 else "169.254.169.254"
        return real(host, *args, **kwargs)

    hook = subscribe(
        engine, f"http://hooks.rebind.test:{receiver.port}/hook", event_types=("instance.started",)
    )
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    dispatcher = Dispatcher(engine, replace(FAST, max_attempts=1))
    run_until(dispatcher, lambda: delivery_states(engine, hook) != {"pending": 1}, "an attempt")
    dispatcher.stop()
    assert delivery_states(engine, hook) == {"delivered": 1}
    assert lookups == ["hooks.rebind.test"]
    assert len(receiver.accepted()) == 1


def test_a_drip_feeding_receiver_is_cut_off_at_the_deadline_and_the_dispatcher_goes_on(
    engine: Engine, receiver: Receiver
) -> None:
    dripping = subscribe(engine, receiver.drip_url, event_types=("instance.started",))
    healthy = subscribe(engine, receiver.url, event_types=("instance.completed",))
    engine.deploy(two_steps())
    handle = engine.start_latest("two-steps")
    (task,) = handle.user_tasks()
    engine.complete_task(task.id)
    # One thread: the completed event (a later seq) is attempted after the dripping one.
    dispatcher = Dispatcher(engine, replace(FAST, max_attempts=1, threads=1))
    dispatcher.start()
    try:
        wait_until(
            lambda: (
                delivery_states(engine, dripping) == {"dead": 1}
                and delivery_states(engine, healthy) == {"delivered": 1}
            ),
            "the drip to time out and the next delivery to arrive",
            20,
        )
        wait_until(lambda: len(receiver.streams) == 1, "the receiver to see the cut", 10)
    finally:
        dispatcher.stop()
    (dead,) = reads.deliveries(engine, dripping, DeliveryState.DEAD)
    assert dead.last_status == "timeout"
    assert [r.event for r in receiver.received] == ["instance.started", "instance.completed"]
    (cut,) = receiver.streams
    # Cut off well before the receiver had dripped its whole (30 s) body.
    assert cut.path == "/drip" and not cut.complete and cut.sent < DRIP_BYTES


def test_an_endless_answer_is_read_up_to_a_cap_and_its_status_counts(
    engine: Engine, receiver: Receiver
) -> None:
    endless = subscribe(engine, receiver.endless_url, event_types=("instance.started",))
    healthy = subscribe(engine, receiver.url, event_types=("instance.completed",))
    engine.deploy(two_steps())
    handle = engine.start_latest("two-steps")
    (task,) = handle.user_tasks()
    engine.complete_task(task.id)
    dispatcher = Dispatcher(engine, replace(FAST, max_attempts=1))
    run_until(
        dispatcher,
        lambda: (
            delivery_states(engine, endless) == {"delivered": 1}
            and delivery_states(engine, healthy) == {"delivered": 1}
        ),
        "both deliveries",
    )
    dispatcher.stop()
    (done,) = reads.deliveries(engine, endless)
    assert done.last_status == "HTTP 200"
    wait_until(lambda: len(receiver.streams) == 1, "the receiver to see the close", 10)
    (cut,) = receiver.streams
    assert cut.path == "/endless" and not cut.complete


def test_a_redirect_is_a_failed_attempt_and_is_not_followed(
    engine: Engine, receiver: Receiver
) -> None:
    hook = subscribe(engine, receiver.redirect_url, event_types=("instance.started",))
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    dispatcher = Dispatcher(engine, replace(FAST, max_attempts=1))
    run_until(dispatcher, lambda: delivery_states(engine, hook) == {"dead": 1}, "a dead letter")
    dispatcher.stop()
    (dead,) = reads.deliveries(engine, hook, DeliveryState.DEAD)
    assert dead.last_status == "HTTP 302 (redirects are not followed)"
    assert [r.status for r in receiver.received] == [302]
