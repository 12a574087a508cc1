"""Alembic, driven from code: bring a database to the newest schema, say where it is, add revisions.

The revisions live in `migrations/` at the top of the repository, beside `engine/`.

    python -m engine.db.migrate revision "add job table"   # autogenerate against a scratch database
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from engine.db.database import Database, install_sigterm_exit, normalize_url, sqlalchemy_url_for

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
# Key of the session-level advisory lock that serialises upgrades ("interlck" as a bigint).
ADVISORY_LOCK_KEY = int.from_bytes(b"interlck", "big") & 0x7FFF_FFFF_FFFF_FFFF


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config for `migrations/`; `url` reaches env.py through `config.attributes`.

    The URL is never put through `set_main_option`: its ConfigParser interpolation chokes on the
    `%2F` that a socket path in `?host=` can contain.
    """
    config = Config()
    config.set_main_option("script_location", _escape(str(MIGRATIONS_DIR)))
    config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    if url is not None:
        config.attributes["url"] = sqlalchemy_url_for(url)
    return config


def _escape(value: str) -> str:
    return value.replace("%", "%%")


@contextmanager
def _upgrade_lock(url: str) -> Iterator[None]:
    """Hold the migration advisory lock on a connection of its own, so concurrent starters queue."""
    with psycopg.connect(normalize_url(url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK_KEY,))
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_KEY,))


def upgrade(url: str, revision: str = "head") -> None:
    """Apply every pending migration up to `revision`. Safe when several processes start at once."""
    with _upgrade_lock(url):
        command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    """Revert migrations down to `revision` (`"base"` for an empty schema)."""
    with _upgrade_lock(url):
        command.downgrade(alembic_config(url), revision)


def current_revision(url: str) -> str | None:
    """The revision the database is at, or None when it has never been migrated."""
    engine = create_engine(sqlalchemy_url_for(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str:
    """The newest revision in `migrations/`."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def new_revision(message: str) -> Path:
    """Autogenerate the next revision from `engine.schema` against a scratch embedded database.

    Revision ids count up from the current head ("0001", "0002", ...). Returns the new file.
    """
    scripts = ScriptDirectory.from_config(alembic_config())
    heads = scripts.get_heads()
    if len(heads) > 1:
        raise RuntimeError(f"migrations have several heads {heads}; merge them first")
    rev_id = f"{int(heads[0]) + 1:04d}" if heads else "0001"
    scratch = Path(tempfile.mkdtemp(prefix="interlock-migration-"))
    try:
        with Database.open_embedded(scratch) as db:
            upgrade(db.url)
            script = command.revision(
                alembic_config(db.url), message=message, autogenerate=True, rev_id=rev_id
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if script is None or isinstance(script, list):
        raise RuntimeError("alembic did not write exactly one revision")
    path = Path(script.path)
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "format", "--quiet", str(path)], check=False)
    subprocess.run([*ruff, "check", "--fix", "--quiet", str(path)], check=False)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.db.migrate")
    sub = parser.add_subparsers(dest="action", required=True)
    rev = sub.add_parser("revision", help="autogenerate a revision from engine.schema")
    rev.add_argument("message")
    up = sub.add_parser("upgrade", help="migrate DATABASE_URL (or the embedded database) to head")
    up.add_argument("revision", nargs="?", default="head")
    args = parser.parse_args(argv)
    install_sigterm_exit()
    if args.action == "revision":
        print(new_revision(args.message))
    else:
        with Database.open() as db:
            upgrade(db.url, args.revision)
            print(current_revision(db.url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
