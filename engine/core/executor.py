"""The one path of every mutation: a typed command runs in one transaction.

BEGIN; the command loads and locks its rows, validates, advances, persists; COMMIT. Serialization
failures and deadlocks are retried with backoff. An optional idempotency key makes a repeated
command return the first result without a second effect.

A command that declares `optimistic = True` first runs without a transaction of its own: it loads
its instance in one statement without locking it, and its one write statement is its whole
transaction, applied only if the instance's version is still the one loaded (every write to an
instance bumps it). Two statements and no BEGIN, lock or COMMIT: what a worker's report costs
when nobody else is changing the same instance. When somebody was (the write is stale), or the
command reaches a service-task handler (which may write with the command's connection), the
command runs again the ordinary way, under the lock.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool

from engine.core import permits
from engine.core.actors import Actor, current
from engine.core.definitions import DefinitionCache
from engine.core.handlers import HandlerRegistry
from engine.core.settings import EngineSettings
from engine.core.snapshots import SnapshotCache
from engine.db.outage import Availability
from engine.errors import (
    STALE_WRITE_SQLSTATE,
    BadRequest,
    Conflict,
    IdempotencyKeyReused,
    InterlockError,
    InvariantViolation,
    InvariantViolationKind,
    NeedsTransaction,
)
from engine.loops.announcer import Announcer
from engine.observe.instrument import observed
from engine.store import idempotency as idempotency_store
from engine.store.definitions import DefinitionRow

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Result:
    """A command's deterministic result; JSON-native fields only, so it can be replayed."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


R = TypeVar("R", bound=Result, covariant=True)


class Command(Protocol, Generic[R]):
    """A command runs in a transaction of its own. One whose `execute` sends exactly one statement
    may say so with a class attribute `one_statement = True`: that statement is then its whole
    transaction, with no BEGIN and COMMIT around it. One that loads one instance and writes it
    with `persist` may declare `optimistic = True` (see the module docstring). What its actor
    must hold it declares as `permits` (engine/core/permits.py): the executor checks a permit that
    needs no fact before `execute`, the command the others once it has loaded their facts; every
    command of engine/commands declares them (tests/unit/test_command_permits.py)."""

    name: ClassVar[str]
    result_type: ClassVar[type[Result]]

    def execute(self, tx: Tx) -> R: ...


MAX_IDEMPOTENCY_KEY = 200


@dataclass(frozen=True)
class Idempotency:
    """A caller's idempotency key. It belongs to the principal that sent it (another caller's
    same key is another entry) and is bound to the fingerprint of the request it first came
    with: the same key with a different request is refused, not answered with the first result.
    An empty principal is the Python API's, where the caller is the hosting program."""

    key: str
    principal: str = ""
    fingerprint: str = ""

    @classmethod
    def of(cls, given: str | Idempotency | None, command: Command[Any]) -> Idempotency | None:
        """`given` as an Idempotency; a bare key is the Python API's, fingerprinted by the
        command itself (its class and every field)."""
        if given is None or isinstance(given, Idempotency):
            return given
        return cls(given, "", fingerprint(repr(command)))


def fingerprint(*parts: str | bytes) -> str:
    """A digest of the parts, each delimited, so that ('ab', 'c') and ('a', 'bc') differ."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


@dataclass
class Tx:
    """What a command may touch: the transaction's connection, the time, the immutable caches."""

    conn: psycopg.Connection[Any]
    now: datetime
    definitions: DefinitionCache
    handlers: HandlerRegistry
    settings: EngineSettings
    # Channels to NOTIFY once the transaction has committed (see engine/loops/announcer.py).
    announcements: set[str] = dataclasses.field(default_factory=set)
    # An optimistic attempt: no transaction, the instance loaded without its lock, and the write
    # statement applied only over the version loaded.
    optimistic: bool = False
    # Snapshots fetches loaded, for the reports that follow (see engine/core/snapshots.py), and
    # whether this attempt runs over one.
    snapshots: SnapshotCache = dataclasses.field(default_factory=SnapshotCache)
    from_snapshot: bool = False
    # The operator the command is done for, or None (engine/core/actors.py, engine/core/audit.py).
    actor: Actor | None = None
    # Latest definitions the command took from the cache instead of looking them up: the write
    # statement checks they still are (see engine/core/definitions.py).
    assumed_latest: list[DefinitionRow] = dataclasses.field(default_factory=list)


RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)

# The session setting of the connections commands run on (see `Executor`). A command's statements
# look rows up by key, and most run with the same shape thousands of times a minute: planning them
# each time (what PostgreSQL does while a custom plan looks no dearer than the generic one) costs
# more than running them. Reads, on the engine's other pool, keep the default.
PLAN_CACHE_MODE = ("plan_cache_mode", "force_generic_plan")
GENERIC_PLANS = "-c {}={}".format(*PLAN_CACHE_MODE)
T = TypeVar("T", bound=Result)


class _AssumedLatest(Exception):
    """An attempt that took a latest definition on trust failed: run it again with a look-up
    (engine/core/definitions.py)."""


class Executor:
    def __init__(
        self,
        pool: ConnectionPool[Any],
        definitions: DefinitionCache,
        handlers: HandlerRegistry,
        clock: Clock = system_clock,
        settings: EngineSettings | None = None,
        max_attempts: int = 8,
        announcer: Announcer | None = None,
        availability: Availability | None = None,
    ) -> None:
        self.settings = settings or EngineSettings()
        self.pool = pool
        self.definitions = definitions
        self.handlers = handlers
        self.clock = clock
        self.max_attempts = max_attempts
        self.announcer = announcer
        # Fails commands fast while the database is down (engine/db/outage.py): an outage leaves
        # as DatabaseUnavailable, never retried here.
        self.availability = availability or Availability(lambda: None)
        self.snapshots = SnapshotCache()

    def run(self, command: Command[T], idempotency: str | Idempotency | None = None) -> T:
        self.availability.admit()
        with self.availability.translating():
            result = observed(command, lambda: self._run(command, idempotency))
        self.availability.mark_up()
        return result

    def _run(self, command: Command[T], idempotency: str | Idempotency | None) -> T:
        idempotency_key = Idempotency.of(idempotency, command)
        if getattr(command, "optimistic", False) and idempotency_key is None:
            try:
                return self._run_optimistic(command)
            except (_Stale, NeedsTransaction, *RETRYABLE):
                pass  # a write gone stale, a handler to run, a lost race: again, under the lock
        for attempt in range(1, self.max_attempts + 1):
            try:
                return self._run_once(command, idempotency_key)
            except _AssumedLatest as exc:
                if attempt == self.max_attempts and exc.__cause__ is not None:
                    raise exc.__cause__ from None
            except RETRYABLE:
                if attempt == self.max_attempts:
                    raise
                time.sleep(random.uniform(0, 0.005 * 2**attempt))
            except InvariantViolation as exc:
                # Even under the instance's lock a write can go stale: a fetch-and-lock takes an
                # external task without that lock. Again, over what the fetch wrote.
                stale = exc.kind is InvariantViolationKind.STALE_WRITE
                if not stale or attempt == self.max_attempts:
                    raise
            except pg_errors.UniqueViolation as exc:
                # Two commands with the same new idempotency key: the loser retries and then
                # finds the winner's result.
                if idempotency_key is None or "idempotency" not in str(exc.diag.constraint_name):
                    raise
        raise AssertionError("unreachable")

    def _run_once(self, command: Command[T], idempotency_key: Idempotency | None) -> T:
        # Pooled connections are in autocommit mode; the transaction is spelled out so that BEGIN,
        # the writes and COMMIT travel in the pipeline with no round trip of their own. A command
        # that is one statement is its own transaction: no BEGIN, no COMMIT, no pipeline.
        with self.availability.pooled(self.pool) as conn:
            tx = self._tx(conn)
            if getattr(command, "one_statement", False) and idempotency_key is None:
                permits.before(tx, command)
                result = command.execute(tx)
            else:
                result = self._in_transaction(tx, command, idempotency_key)
        self._announce(tx)
        return result

    def _run_optimistic(self, command: Command[T]) -> T:
        with self.availability.pooled(self.pool) as conn:
            tx = self._tx(conn, optimistic=True)
            try:
                permits.before(tx, command)
                result = command.execute(tx)
            except psycopg.Error as exc:
                # IL409: the write's compare-and-swap found the instance's version or the task's
                # worker changed since the load; nothing was written.
                if exc.sqlstate == STALE_WRITE_SQLSTATE:
                    raise _Stale() from None
                raise
            except InterlockError:
                # A refusal judged over a snapshot may be judged on state older than the
                # committed one (another worker took the task after this one's lease expired,
                # through another replica): it is judged again under the lock. Any other error,
                # over a snapshot or not, is no refusal and propagates.
                if tx.from_snapshot:
                    raise _Stale() from None
                raise
        self._announce(tx)
        return result

    def _tx(self, conn: psycopg.Connection[Any], optimistic: bool = False) -> Tx:
        return Tx(
            conn,
            self.clock(),
            self.definitions,
            self.handlers,
            self.settings,
            optimistic=optimistic,
            snapshots=self.snapshots,
            actor=current(),
        )

    def _announce(self, tx: Tx) -> None:
        if self.announcer is not None:
            for channel in tx.announcements:
                self.announcer.announce(channel)

    def _in_transaction(
        self, tx: Tx, command: Command[T], idempotency_key: Idempotency | None
    ) -> T:
        conn = tx.conn
        try:
            with conn.pipeline():
                conn.execute("BEGIN")
                result = self._execute(tx, command, idempotency_key)
                conn.execute("COMMIT")
        except BaseException as exc:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute("ROLLBACK")
            if tx.assumed_latest and isinstance(exc, Exception):
                # A latest definition taken on trust may be why (a newer version refuses what
                # the old one ran into): forgotten, the command runs again with a look-up.
                for assumed in tx.assumed_latest:
                    tx.definitions.forget_latest(assumed.key)
                raise _AssumedLatest() from exc
            if isinstance(exc, psycopg.Error) and exc.sqlstate == STALE_WRITE_SQLSTATE:
                raise InvariantViolation(
                    InvariantViolationKind.STALE_WRITE, exc.diag.message_primary or str(exc)
                ) from None
            raise
        return result

    def _execute(self, tx: Tx, command: Command[T], idempotency_key: Idempotency | None) -> T:
        if idempotency_key is not None:
            replayed = _replay(tx, command, idempotency_key)
            if replayed is not None:
                return replayed
        # What the command needs its actor to hold, checked in its transaction: the permits
        # that need no fact here, the others by the command once it knows the resource
        # (engine/core/permits.py).
        permits.before(tx, command)
        result = command.execute(tx)
        if idempotency_key is not None:
            idempotency_store.insert(
                tx.conn,
                idempotency_key.principal,
                idempotency_key.key,
                command.name,
                idempotency_key.fingerprint,
                result.to_json(),
            )
        return result


class _Stale(Exception):
    """An optimistic write found the instance changed since its load; nothing was written."""


def _replay(tx: Tx, command: Command[T], idempotency: Idempotency) -> T | None:
    key = idempotency.key
    if not key or len(key) > MAX_IDEMPOTENCY_KEY or "\0" in key:
        raise BadRequest(
            f"an idempotency key must be 1 to {MAX_IDEMPOTENCY_KEY} characters, without NUL"
        )
    # Requests repeating one key queue here, before any other lock, so the second finds the
    # first's committed entry instead of doing the work again and failing on the key.
    lock = int.from_bytes(bytes.fromhex(fingerprint(idempotency.principal, key))[:8], "big")
    row = idempotency_store.locked_entry(tx.conn, lock - 2**63, idempotency.principal, key)
    if row is None:
        return None
    if row[0] != command.name:
        raise Conflict(
            f"idempotency key '{key}' was already used for a {row[0]} command",
            idempotency_key=key,
        )
    if row[1] != idempotency.fingerprint:
        raise IdempotencyKeyReused(
            f"idempotency key '{key}' was already used with a different request",
            idempotency_key=key,
        )
    result: T = command.result_type(**row[2])  # type: ignore[assignment]
    return result
