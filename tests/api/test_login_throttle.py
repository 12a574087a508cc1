"""Failed log-ins are throttled (console form, HTTP Basic) per user name from one address, per
user name from all addresses and per client address, unknown API tokens per address: past a
limit the answer is 429 with Retry-After and the password is not even checked, however many
attempts arrive at once. Nobody's failures refuse another principal's correct credentials: a
valid API token always passes, and a full address still lets a user whose name it did not guess
log in. A failed log-in costs the same PBKDF2 whether the user exists or not."""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from app.auth import address_key
from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.identity.accounts import PBKDF2_ITERATIONS, Role
from engine.queries import accounts
from tests.server import PASSWORD, LiveServer, live_server, login_token

PER_USER = 5
PER_USER_ALL = 8
PER_ADDRESS = 12
LIMITS = {
    "login_failures_per_user": PER_USER,
    "login_failures_per_user_all_addresses": PER_USER_ALL,
    "login_failures_per_address": PER_ADDRESS,
    "login_failure_window_seconds": 120,
}


@pytest.fixture
def throttled(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False, settings_options=LIMITS) as server:
        yield server


@pytest.fixture
def pbkdf2_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The iteration count of every PBKDF2 computed in this process (the test server's too),
    counted by a wrapper that runs the real function."""
    calls: list[int] = []
    real = hashlib.pbkdf2_hmac
    lock = threading.Lock()

    def counting(name: str, password: bytes, salt: bytes, iterations: int, *rest: Any) -> bytes:
        with lock:
            calls.append(iterations)
        return real(name, password, salt, iterations, *rest)

    monkeypatch.setattr(hashlib, "pbkdf2_hmac", counting)
    return calls


def from_address(address: str) -> httpx.Client:
    """A client whose connections come from another loopback address (all of 127/8 is local)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60.0)


def form_login(client: httpx.Client, url: str, name: str, password: str) -> httpx.Response:
    token = login_token(client.get(f"{url}/login").text)
    return client.post(
        f"{url}/login", data={"name": name, "password": password, "login_token": token}
    )


def basic(name: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def add_user(server: LiveServer, name: str, role: Role = Role.VIEWER) -> None:
    server.engine.run(CreateUser(name, role, PASSWORD))


def test_console_log_in_is_throttled_per_user(throttled: LiveServer) -> None:
    url = throttled.url
    with httpx.Client() as client:
        for _ in range(PER_USER):
            assert form_login(client, url, "operator", "wrong-guess").status_code == 401
        blocked = form_login(client, url, "operator", "wrong-guess")
        assert blocked.status_code == 429
        assert 1 <= int(blocked.headers["retry-after"]) <= 120
        assert "Too many failed log-ins" in blocked.text and "<form" in blocked.text
        # Blocked means blocked: not even the right password is checked.
        assert form_login(client, url, "operator", PASSWORD).status_code == 429
        # Another user from the same address is not held up by these failures.
        assert form_login(client, url, "viewer", PASSWORD).status_code == 303
        # Successful log-ins do not count.
        for _ in range(PER_USER + 2):
            assert form_login(client, url, "viewer", PASSWORD).status_code == 303
    # The guessed user, from another address, is not held up by one address's guesses.
    with from_address("127.0.0.20") as elsewhere:
        assert form_login(elsewhere, url, "operator", PASSWORD).status_code == 303


def test_guessing_a_name_from_many_addresses_meets_its_own_limit(throttled: LiveServer) -> None:
    url = throttled.url
    add_user(throttled, "spread")
    failures = 0
    for n in range(PER_USER_ALL):
        with from_address(f"127.0.1.{n // 2 + 1}") as client:
            assert form_login(client, url, "spread", f"guess-{n}").status_code == 401
            failures += 1
    assert failures == PER_USER_ALL
    # From an address that never guessed: refused, even with the right password.
    with from_address("127.0.1.100") as client:
        refused = client.get(f"{url}/api/v1/definitions", headers=basic("spread", PASSWORD))
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert form_login(client, url, "spread", PASSWORD).status_code == 429
        assert form_login(client, url, "viewer", PASSWORD).status_code == 303


def test_a_full_address_guesses_no_more_but_its_other_users_log_in(throttled: LiveServer) -> None:
    url = throttled.url
    for n in range(3):
        add_user(throttled, f"user-{n}")
    with from_address("127.0.0.2") as attacker, from_address("127.0.0.3") as other:
        for n in range(PER_ADDRESS):
            assert form_login(attacker, url, f"user-{n % 3}", "guess").status_code == 401
        # Each name has 4 failures, under its own limit of 5: the address's limit refuses them.
        for n in range(3):
            assert form_login(attacker, url, f"user-{n}", "guess").status_code == 429
            assert form_login(attacker, url, f"user-{n}", PASSWORD).status_code == 429
            wrong = attacker.get(f"{url}/api/v1/definitions", headers=basic(f"user-{n}", "guess"))
            assert wrong.status_code == 429 and wrong.json()["type"] == "TooManyRequests"
        # Users behind the same address whose names were not guessed still log in.
        assert form_login(attacker, url, "admin", PASSWORD).status_code == 303
        assert (
            attacker.get(f"{url}/api/v1/definitions", headers=basic("admin", PASSWORD)).status_code
            == 200
        )
        # A name the full address never tried gets one check; once it failed, no more.
        assert form_login(attacker, url, "viewer", "guess").status_code == 401
        assert form_login(attacker, url, "viewer", "guess-2").status_code == 429
        assert form_login(attacker, url, "viewer", PASSWORD).status_code == 429
        # Elsewhere, the guessed names log in (4 or 5 failures each, under PER_USER_ALL).
        assert form_login(other, url, "user-0", PASSWORD).status_code == 303
        assert form_login(other, url, "viewer", PASSWORD).status_code == 303


def test_basic_and_bearer_are_throttled_with_json(throttled: LiveServer) -> None:
    url = throttled.url
    with from_address("127.0.0.4") as client:
        for path in ("/api/v1/definitions", "/engine-rest/process-definition"):
            assert (
                client.get(f"{url}{path}", headers=basic("operator", PASSWORD)).status_code == 200
            )
        for n in range(PER_USER):
            wrong = client.get(
                f"{url}/engine-rest/process-definition", headers=basic("operator", f"x{n}")
            )
            assert wrong.status_code == 401
        for path in ("/api/v1/definitions", "/engine-rest/process-definition"):
            blocked = client.get(f"{url}{path}", headers=basic("operator", PASSWORD))
            assert blocked.status_code == 429
            assert blocked.json()["type"] == "TooManyRequests"
            assert int(blocked.headers["retry-after"]) >= 1
    with from_address("127.0.0.5") as client:
        bearer = {"Authorization": "Bearer il_not-a-token"}
        for _ in range(PER_ADDRESS):
            assert client.get(f"{url}/api/v1/definitions", headers=bearer).status_code == 401
        for path in ("/api/v1/definitions", "/engine-rest/process-definition"):
            blocked = client.get(f"{url}{path}", headers=bearer)
            assert blocked.status_code == 429 and blocked.json()["type"] == "TooManyRequests"
            assert int(blocked.headers["retry-after"]) >= 1


def test_valid_credentials_pass_after_many_failures_from_their_address(
    throttled: LiveServer,
) -> None:
    """One address (a proxy every client shares) sends far more bad tokens, bad Basic
    credentials and bad console log-ins than its limit allows; valid credentials from it still
    work, while the guessing stays refused."""
    url = throttled.url
    add_user(throttled, "victim")
    paths = ("/api/v1/definitions", "/engine-rest/process-definition")
    with from_address("127.0.0.11") as shared:
        guesses: Counter[int] = Counter()
        for n in range(PER_USER + 3):
            basic_guess = basic("victim", f"guess-{n}")
            guesses[shared.get(f"{url}{paths[n % 2]}", headers=basic_guess).status_code] += 1
            guesses[form_login(shared, url, "victim", f"guess-{n}").status_code] += 1
        assert guesses == Counter({401: PER_USER, 429: PER_USER + 6}), guesses
        bad_token = {"Authorization": "Bearer il_not-a-token"}
        tokens = Counter(
            shared.get(f"{url}{paths[n % 2]}", headers=bad_token).status_code
            for n in range(8 * PER_ADDRESS)
        )
        left = PER_ADDRESS - PER_USER
        assert tokens == Counter({401: left, 429: 8 * PER_ADDRESS - left}), tokens

        # The admin token, and every other valid token, answer as if nothing had happened.
        for path in paths:
            for role in ("admin", "viewer"):
                answer = shared.get(f"{url}{path}", headers=throttled.bearer(role))
                assert answer.status_code == 200, (path, role, answer.text)
        # So do the correct passwords of users whose names were not guessed.
        for path in paths:
            answer = shared.get(f"{url}{path}", headers=basic("operator", PASSWORD))
            assert answer.status_code == 200, (path, answer.text)
        assert form_login(shared, url, "admin", PASSWORD).status_code == 303

        # The guessing itself stays refused: more bad tokens, the guessed name (even with the
        # right password: it is not checked), and any further name's second guess.
        assert shared.get(f"{url}{paths[0]}", headers=bad_token).status_code == 429
        guessed = shared.get(f"{url}{paths[1]}", headers=basic("victim", PASSWORD))
        assert guessed.status_code == 429 and guessed.json()["type"] == "TooManyRequests"
        assert form_login(shared, url, "victim", PASSWORD).status_code == 429
        assert form_login(shared, url, "viewer", "wrong-guess").status_code == 401
        assert form_login(shared, url, "viewer", "wrong-guess-2").status_code == 429

    # The victim logs in from an address that did not guess (PER_USER failures, under the
    # limit for all addresses).
    with from_address("127.0.0.12") as elsewhere:
        assert form_login(elsewhere, url, "victim", PASSWORD).status_code == 303
        answer = elsewhere.get(f"{url}{paths[0]}", headers=basic("victim", PASSWORD))
        assert answer.status_code == 200


def test_throttle_counts_an_ipv6_client_by_its_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::7")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:10.0.0.7") == "10.0.0.7"
    assert address_key("127.0.0.1") == "127.0.0.1"
    assert address_key(None) == "unknown"


def parallel(count: int, attempt: Callable[[int], int]) -> Counter[int]:
    barrier = threading.Barrier(count)

    def run(n: int) -> int:
        barrier.wait()
        return attempt(n)

    with ThreadPoolExecutor(count) as pool:
        return Counter(pool.map(run, range(count)))


def test_parallel_wrong_passwords_check_no_more_than_the_limit(
    throttled: LiveServer, pbkdf2_calls: list[int]
) -> None:
    url = throttled.url
    add_user(throttled, "target")
    add_user(throttled, "worker")
    pbkdf2_calls.clear()  # creating users hashes their passwords

    def console(n: int) -> int:
        with from_address("127.0.0.6") as client:
            return form_login(client, url, "target", f"guess-{n}").status_code

    statuses = parallel(100, console)
    assert statuses == Counter({401: PER_USER, 429: 100 - PER_USER}), statuses
    assert len(pbkdf2_calls) == PER_USER

    pbkdf2_calls.clear()

    def api(n: int) -> int:
        with from_address("127.0.0.7") as client:
            path = "/engine-rest/process-definition" if n % 2 else "/api/v1/definitions"
            return client.get(f"{url}{path}", headers=basic("worker", f"guess-{n}")).status_code

    statuses = parallel(100, api)
    assert statuses == Counter({401: PER_USER, 429: 100 - PER_USER}), statuses
    assert len(pbkdf2_calls) == PER_USER


def test_parallel_right_passwords_are_not_throttled(throttled: LiveServer) -> None:
    """Many clients of one user at once, all with the right password: none is refused."""

    def api(n: int) -> int:
        with from_address("127.0.0.8") as client:
            return client.get(
                f"{throttled.url}/engine-rest/process-definition",
                headers=basic("operator", PASSWORD),
            ).status_code

    assert parallel(40, api) == Counter({200: 40})


def test_unknown_users_cost_the_same_pbkdf2(database_url: str, pbkdf2_calls: list[int]) -> None:
    with Engine(database_url, migrate=False) as engine, engine.connection() as conn:
        engine.run(CreateUser("known", Role.VIEWER, PASSWORD))
        accounts.verify_password(conn, "warm-up", "x")  # the dummy hash is made once
        pbkdf2_calls.clear()
        for name, password in (
            ("known", PASSWORD),
            ("known", "wrong-password"),
            ("unknown", "wrong-password"),
            ("nul\0name", "wrong-password"),
            ("", "wrong-password"),
        ):
            before = len(pbkdf2_calls)
            accounts.verify_password(conn, name, password)
            assert pbkdf2_calls[before:] == [PBKDF2_ITERATIONS], name


def test_failed_log_ins_on_health_count_for_their_address(throttled: LiveServer) -> None:
    url = throttled.url
    with from_address("127.0.0.9") as client:
        for n in range(PER_ADDRESS):
            wrong = client.get(f"{url}/health", headers=basic(f"nobody-{n}", "wrong-password"))
            assert wrong.json() == {"status": "ok"}
        refused = client.get(f"{url}/api/v1/instances", headers=basic("nobody-0", "again"))
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        bad = {"Authorization": "Bearer il_not-a-token"}
        assert client.get(f"{url}/api/v1/instances", headers=bad).status_code == 429
        valid = client.get(f"{url}/api/v1/instances", headers=throttled.bearer("viewer"))
        assert valid.status_code == 200
