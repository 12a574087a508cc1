"""row estimates for the persist statement; notifications only when work becomes available

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Not inlined (STRICT), so the planner keeps its estimate of a few rows per list.
ROWS_FUNCTION = """
CREATE FUNCTION interlock_rows(items jsonb) RETURNS SETOF jsonb
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 4
AS $$ SELECT jsonb_array_elements(items) $$
"""

# Wake job executors and long-polling workers only when a statement made work available:
# a job without a lock owner, an open external task without a worker. Acquisitions and
# fetch-and-lock statements (which take work) must not wake anybody, or idle waiters would spin.
NOTIFY = {
    "job": ("interlock_job", "lock_owner IS NULL AND retries > 0"),
    "external_task": ("interlock_external_task", "state = 'Open' AND worker_id IS NULL"),
}


def upgrade() -> None:
    op.execute(ROWS_FUNCTION)
    op.execute("DROP TRIGGER IF EXISTS job_notify ON job")
    op.execute("DROP TRIGGER IF EXISTS external_task_notify ON external_task")
    op.execute("DROP FUNCTION IF EXISTS interlock_notify_job()")
    op.execute("DROP FUNCTION IF EXISTS interlock_notify_external_task()")
    for table, (channel, available) in NOTIFY.items():
        op.execute(
            f"CREATE FUNCTION interlock_notify_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN IF EXISTS (SELECT 1 FROM changed_rows WHERE {available}) THEN "
            f"PERFORM pg_notify('{channel}', ''); END IF; RETURN NULL; END $$"
        )
        # A trigger with a transition table serves one event, hence one per event.
        for event in ("INSERT", "UPDATE"):
            op.execute(
                f"CREATE TRIGGER {table}_notify_{event.lower()} AFTER {event} ON {table} "
                f"REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT "
                f"EXECUTE FUNCTION interlock_notify_{table}()"
            )


def downgrade() -> None:
    for table, (channel, _) in NOTIFY.items():
        for event in ("INSERT", "UPDATE"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_notify_{event.lower()} ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS interlock_notify_{table}()")
        op.execute(
            f"CREATE FUNCTION interlock_notify_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN PERFORM pg_notify('{channel}', ''); RETURN NULL; END $$"
        )
        op.execute(
            f"CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION interlock_notify_{table}()"
        )
    op.execute("DROP FUNCTION IF EXISTS interlock_rows(jsonb)")
