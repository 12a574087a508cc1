"""The `interlock` command line."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import InterlockError

if TYPE_CHECKING:
    from engine.api import Engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="interlock", description="BPMN engine on PostgreSQL")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the console on 127.0.0.1")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--demo", action="store_true", help="deploy the demo and keep it running")
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help="no credentials at all (only on a loopback address, for local development)",
    )
    serve.add_argument("--no-jobs", action="store_true", help="do not run the job executor here")
    serve.add_argument(
        "--public-url",
        type=_public_url,
        help="the URL clients reach the server at, e.g. https://bpm.example.com behind a TLS "
        "proxy; absolute links use it (env INTERLOCK_PUBLIC_URL)",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="ADDRESSES",
        help="comma-separated proxy addresses whose X-Forwarded-For and X-Forwarded-Proto are "
        "believed (env INTERLOCK_FORWARDED_ALLOW_IPS; default: none)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=_positive,
        help="largest request body (default 1 MiB; env INTERLOCK_MAX_BODY_BYTES)",
    )
    serve.add_argument(
        "--max-deployment-bytes",
        type=_positive,
        help="largest deployment upload (default 16 MiB; env INTERLOCK_MAX_DEPLOYMENT_BYTES)",
    )

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="apply pending migrations")

    summaries = commands.add_parser("summaries", help="the console's summary rows")
    summary_commands = summaries.add_subparsers(dest="summaries_command", required=True)
    summary_commands.add_parser(
        "rebuild", help="recount every summary row from the tables (a full scan of each)"
    )

    deploy = commands.add_parser("deploy", help="deploy BPMN and DMN files")
    deploy.add_argument("files", nargs="+", type=Path)

    start = commands.add_parser("start", help="start the latest version of a process")
    start.add_argument("key")
    start.add_argument("--var", action="append", default=[], metavar="NAME=VALUE")
    start.add_argument("--business-key")

    commands.add_parser("demo", help="run the parallel-gateway example")

    instances = commands.add_parser("instances", help="list instances, newest first")
    instances.add_argument("--key", help="process key")
    instances.add_argument("--state", help="Active, Suspended, Completed, Terminated, ...")
    instances.add_argument("--business-key")
    instances.add_argument("--with-incidents", action="store_true", help="only with incidents")
    instances.add_argument("--limit", type=_positive, default=50)

    incidents = commands.add_parser("incidents", help="list open incidents")
    incidents.add_argument("--instance", help="only this instance's")
    incidents.add_argument("--key", help="only this process key's")

    retry = commands.add_parser("retry", help="retry incidents: their paths run again")
    retry.add_argument("incident_ids", nargs="*", metavar="INCIDENT")
    retry.add_argument("--all", action="store_true", help="every open incident (of --key)")
    retry.add_argument("--key", help="with --all: only this process key's incidents")

    for kind, secret in (("user", "a generated password"), ("token", "the token")):
        credential = commands.add_parser(kind, help=f"manage {kind}s")
        actions = credential.add_subparsers(dest=f"{kind}_command", required=True)
        add = actions.add_parser("add", help=f"create a {kind}; prints {secret} once")
        add.add_argument("name")
        add.add_argument("--role", required=True, choices=("viewer", "operator", "admin"))

    jobs = commands.add_parser(
        "jobs", help="run a job executor (timers, asynchronous continuations, retries)"
    )
    jobs.add_argument("--threads", type=_positive, default=1)
    jobs.add_argument("--batch-size", type=_positive, help="jobs per acquisition (default 200)")
    jobs.add_argument(
        "--handlers",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE and call its register(engine) to add service-task handlers",
    )

    worker = commands.add_parser(
        "worker", help="run the external-task worker a module defines (a module-level `worker`)"
    )
    worker.add_argument("module", help="dotted module name, e.g. myapp.workers")
    worker.add_argument("--max-tasks", type=_positive)
    worker.add_argument("--lock-ms", type=_positive)

    args = parser.parse_args(argv)
    try:
        return _run(args)
    except InterlockError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from engine.db.database import install_sigterm_exit

    install_sigterm_exit()
    log_format = "text"
    if args.command in ("serve", "jobs", "worker"):
        from engine.observe import logs

        try:
            log_format = logs.configure()
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.command == "serve":
        import uvicorn

        from app.main import StartupRefused, create_app
        from app.settings import Settings

        settings = Settings.from_env(
            host=args.host,
            demo=args.demo or None,
            auth=False if args.no_auth else None,
            run_jobs=False if args.no_jobs else None,
            public_url=args.public_url,
            forwarded_allow_ips=args.forwarded_allow_ips,
            max_body_bytes=args.max_body_bytes,
            max_deployment_bytes=args.max_deployment_bytes,
        )
        if settings.public_url:
            try:
                _public_url(settings.public_url)
            except argparse.ArgumentTypeError as exc:
                print(f"error: INTERLOCK_PUBLIC_URL: {exc}", file=sys.stderr)
                return 2
        if not settings.auth and not settings.loopback:
            print("error: --no-auth is only allowed on a loopback address", file=sys.stderr)
            return 2
        from app.main import ensure_credentials, print_first_credentials
        from engine.api import Engine

        try:
            with Engine(settings.database_url, home=settings.home) as engine:
                logging.getLogger("interlock").info("database %s", engine.database.shown_url)
                print_first_credentials(ensure_credentials(engine, settings))
        except StartupRefused as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        from app.shutdown import Server

        app = create_app(settings)
        config = uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            log_level="info",
            # JSON lines: uvicorn's loggers write through the one handler (engine/observe/logs.py).
            log_config=None if log_format == "json" else uvicorn.config.LOGGING_CONFIG,
            # Each request's line comes from app/access.py, with its id, user and duration.
            access_log=False,
            # Requests in flight get the grace period; long polls and streams end at once.
            timeout_graceful_shutdown=max(1, round(settings.shutdown_grace_seconds)),
            # X-Forwarded-* only from the proxies named; uvicorn would believe 127.0.0.1.
            proxy_headers=bool(settings.forwarded_allow_ips),
            forwarded_allow_ips=settings.forwarded_allow_ips or "",
            server_header=False,
        )
        # On SIGTERM the server drains (app/shutdown.py) and then raises the signal again, which
        # install_sigterm_exit turns into SystemExit(0): the process exits 0.
        Server(config, app.state.shutdown).run()
        return 0

    if args.command == "jobs":
        return _run_jobs(args)
    if args.command == "worker":
        return _run_worker(args)

    from engine.api import Engine

    if args.command == "demo":
        from examples.parallel_gateway import main as demo_main

        return demo_main()
    with Engine() as engine, _as_cli_user():
        if args.command == "db":
            print("database is at the latest migration")
        elif args.command == "summaries":
            from engine.commands.summaries import RebuildSummaries

            rebuilt = engine.run(RebuildSummaries())
            print(
                f"summaries rebuilt: {rebuilt.instance_rows} instance, {rebuilt.node_rows} node "
                f"and {rebuilt.bucket_rows} activity rows"
            )
        elif args.command == "deploy":
            result = engine.deploy(*args.files)
            for kind, listed in (("", result.definitions), ("decision ", result.decisions)):
                for d in listed:
                    status = "deployed" if d["created"] else "unchanged"
                    print(f"{status}: {kind}{d['key']} version {d['version']} ({d['id']})")
            for item in result.skipped:
                print(f"skipped: {item['process']} of {item['resource']} ({item['reason']})")
        elif args.command == "start":
            variables = dict(_parse_var(v) for v in args.var)
            handle = engine.start_latest(args.key, variables, business_key=args.business_key)
            print(f"started {handle.id}: {handle.state.value}")
        elif args.command == "instances":
            _print_instances(engine, args)
        elif args.command == "incidents":
            _print_incidents(engine, args)
        elif args.command == "retry":
            return _retry(engine, args)
        elif args.command in ("user", "token"):
            _add_credential(engine, args.command, args.name, args.role)
    return 0


def _run_jobs(args: argparse.Namespace) -> int:
    import importlib

    from engine.api import Engine
    from engine.db.summaries import Folder
    from engine.loops.alerts import AlertWatch
    from engine.loops.jobs import JobExecutor
    from engine.webhooks.dispatcher import Dispatcher

    with Engine() as engine:
        for name in args.handlers:
            register = getattr(importlib.import_module(name), "register", None)
            if not callable(register):
                raise InterlockError(f"module '{name}' has no register(engine) function")
            register(engine)
        executor = JobExecutor(
            engine,
            threads=args.threads,
            batch_size=args.batch_size or JobExecutor.batch_size,
            history_cleanup=True,
        )
        # Webhooks are delivered wherever jobs run.
        dispatcher = Dispatcher.from_env(engine)
        dispatcher.start()
        # The summary rows' fold runs wherever jobs run (engine/db/summaries.py).
        folder = Folder(engine)
        folder.start()
        # And the stuck-instance alerts' raising (engine/loops/alerts.py).
        alert_watch = AlertWatch(engine)
        alert_watch.start()
        # SIGTERM: no new acquisition; the jobs in hand finish within the grace period (one
        # that does not keeps its lock until it expires, as after a crash).
        try:
            with contextlib.suppress(KeyboardInterrupt, SystemExit):
                executor.run_forever(stop_timeout=_grace_seconds())
        finally:
            alert_watch.stop()
            folder.stop()
            dispatcher.stop()
    return 0


def _run_worker(args: argparse.Namespace) -> int:
    """Run the module's `worker` until SIGINT or SIGTERM; the tasks in hand finish first."""
    import importlib
    import logging
    import signal
    import threading

    from engine.loops.worker import Worker

    worker = getattr(importlib.import_module(args.module), "worker", None)
    if not isinstance(worker, Worker):
        raise InterlockError(f"module '{args.module}' defines no Worker named `worker`")
    if args.max_tasks is not None:
        worker.max_tasks = args.max_tasks
    if args.lock_ms is not None:
        worker.lock_ms = args.lock_ms
    if not worker.topics:
        raise InterlockError(f"the worker of module '{args.module}' handles no topic")
    grace = _grace_seconds()
    # SIGINT and SIGTERM only set a flag the main thread waits on: an exception raised into
    # whatever the main thread is doing (a join, a log call) could leave it half done.
    asked = threading.Event()
    previous = {
        signum: signal.signal(signum, lambda *_: asked.set())
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        thread = worker.start()
        logging.getLogger("interlock").info(
            "worker %s handles %s", worker.worker_id, ", ".join(worker.topics)
        )
        while thread.is_alive() and not asked.wait(0.5):
            pass
        # No new fetch; a long poll ends without locking; the tasks in hand are handled and
        # reported within the grace period.
        worker.stop(timeout=grace)
    finally:
        worker.engine.close()
        # Stopping on a signal, the handlers stay: another SIGTERM until the process has exited
        # changes nothing (the default handler would kill it mid-exit).
        if not asked.is_set():
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    return 0


def _grace_seconds() -> float:
    """INTERLOCK_SHUTDOWN_GRACE_SECONDS, else the default of the server's settings."""
    import os

    from app.settings import GRACE_ENV, Settings, grace_seconds

    text = os.environ.get(GRACE_ENV)
    if not text:
        return Settings.shutdown_grace_seconds
    try:
        return grace_seconds(text)
    except ValueError as exc:
        raise InterlockError(str(exc)) from exc


def _public_url(text: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// URL such as https://bpm.example.com, got {text}"
        )
    return text.rstrip("/")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _parse_var(text: str) -> tuple[str, object]:
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise InterlockError(f"--var expects NAME=VALUE, got '{text}'")
    value: object = raw
    if raw in ("true", "false"):
        value = raw == "true"
    else:
        for convert in (int, float):
            try:
                value = convert(raw)
                break
            except ValueError:
                continue
    return name, value


def _table(headers: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    cells = [headers, *(tuple("-" if v is None else str(v) for v in row) for row in rows)]
    widths = [max(len(row[n]) for row in cells) for n in range(len(headers))]
    for row in cells:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def _when(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ") if moment else None


def _print_instances(engine: Engine, args: argparse.Namespace) -> None:
    from engine.queries.instances import InstanceFilter

    where = InstanceFilter(
        definition_key=args.key,
        state=args.state,
        business_key=args.business_key,
        has_incident=True if args.with_incidents else None,
    )
    page = engine.list_instances(where, limit=args.limit)
    _table(
        ("ID", "PROCESS", "STATE", "BUSINESS KEY", "STARTED", "ENDED"),
        [
            (
                i.id,
                i.definition_key,
                i.state,
                i.business_key,
                _when(i.started_at),
                _when(i.ended_at),
            )
            for i in page.items
        ],
    )
    if page.next:
        print(f"(more: showing the newest {args.limit}; narrow with filters or raise --limit)")


def _print_incidents(engine: Engine, args: argparse.Namespace) -> None:
    found = engine.incidents(instance_id=args.instance, definition_key=args.key)
    _table(
        ("ID", "TYPE", "NODE", "INSTANCE", "CREATED", "MESSAGE"),
        [(i.id, i.type, i.node_id, i.instance_id, _when(i.created_at), i.message) for i in found],
    )


def _retry(engine: Engine, args: argparse.Namespace) -> int:
    """Retry the named incidents (or all open ones), reporting progress when there are several;
    one that cannot be retried is reported and the rest go on."""
    ids = list(args.incident_ids)
    if args.all:
        ids += [str(i.id) for i in engine.incidents(definition_key=args.key)]
        if not ids:
            print("no open incidents")
            return 0
    elif args.key:
        raise InterlockError("--key goes with --all")
    if not ids:
        raise InterlockError("name the incidents to retry, or use --all")
    ids = list(dict.fromkeys(ids))
    failed = 0
    for n, incident_id in enumerate(ids, 1):
        prefix = f"[{n}/{len(ids)}] " if len(ids) > 1 else ""
        try:
            result = engine.retry_incident(incident_id)
            print(f"{prefix}retried {incident_id}: incident {result.state}", flush=True)
        except InterlockError as exc:
            failed += 1
            print(f"{prefix}{incident_id}: {exc.message}", file=sys.stderr, flush=True)
    return 1 if failed else 0


def _as_cli_user() -> contextlib.AbstractContextManager[None]:
    """The command line's mutations are audited as the operating-system user who runs it."""
    import getpass

    from engine.core import audit
    from engine.states import AuditChannel

    try:
        user = getpass.getuser() or "cli"
    except (KeyError, OSError):
        user = "cli"
    return audit.acting(audit.Actor(user, AuditChannel.CLI))


def _add_credential(engine: Engine, kind: str, name: str, role: str) -> None:
    import secrets

    from engine.commands.accounts import CreateToken, CreateUser
    from engine.identity import accounts
    from engine.identity.accounts import Role

    if kind == "user":
        password = secrets.token_urlsafe(12)
        engine.run(CreateUser(name, Role(role), password))
        print(f"user {name} ({role}) created; password (shown once): {password}")
    else:
        token = accounts.new_token()
        engine.run(CreateToken(name, Role(role), token))
        print(f"token {name} ({role}) created (shown once): {token}")


if __name__ == "__main__":
    raise SystemExit(main())
