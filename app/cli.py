"""The `interlock` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.errors import InterlockError


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

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="apply pending migrations")

    deploy = commands.add_parser("deploy", help="deploy BPMN files")
    deploy.add_argument("files", nargs="+", type=Path)

    start = commands.add_parser("start", help="start the latest version of a process")
    start.add_argument("key")
    start.add_argument("--var", action="append", default=[], metavar="NAME=VALUE")
    start.add_argument("--business-key")

    commands.add_parser("demo", help="run the parallel-gateway example")

    args = parser.parse_args(argv)
    try:
        return _run(args)
    except InterlockError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from engine.database import install_sigterm_exit

    install_sigterm_exit()
    if args.command == "serve":
        import uvicorn

        from app.main import StartupRefused, create_app
        from app.settings import Settings

        settings = Settings.from_env(
            host=args.host,
            demo=args.demo or None,
            auth=False if args.no_auth else None,
            run_jobs=False if args.no_jobs else None,
        )
        if not settings.auth and not settings.loopback:
            print("error: --no-auth is only allowed on a loopback address", file=sys.stderr)
            return 2
        from app.main import ensure_credentials, print_first_credentials
        from engine.api import Engine

        try:
            with Engine(settings.database_url, home=settings.home) as engine:
                print_first_credentials(ensure_credentials(engine, settings))
        except StartupRefused as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")
        return 0

    from engine.api import Engine

    if args.command == "demo":
        from examples.parallel_gateway import main as demo_main

        return demo_main()
    with Engine() as engine:
        if args.command == "db":
            print("database is at the latest migration")
        elif args.command == "deploy":
            result = engine.deploy(*args.files)
            for d in result.definitions:
                status = "deployed" if d["created"] else "unchanged"
                print(f"{status}: {d['key']} version {d['version']} ({d['id']})")
        elif args.command == "start":
            variables = dict(_parse_var(v) for v in args.var)
            handle = engine.start_latest(args.key, variables, business_key=args.business_key)
            print(f"started {handle.id}: {handle.state.value}")
    return 0


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


if __name__ == "__main__":
    raise SystemExit(main())
