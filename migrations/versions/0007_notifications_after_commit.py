"""the engine announces its changes after commit; the row-count check of its writes

Revision ID: 0007
Revises: 0006
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A NOTIFY makes its transaction's commit wait for a database-wide lock held through the flush.
# Sessions that set interlock.notify = 'after_commit' (the engine's) announce after committing
# instead; other writers (psql, scripts) keep notifying through the triggers.
QUIET = "WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')"

# trigger name -> (table, event, REFERENCING clause, function)
TRIGGERS = {
    "outbox_notify": ("outbox", "INSERT", "", "interlock_notify_outbox"),
    **{
        f"{table}_notify_{event.lower()}": (
            table,
            event,
            "REFERENCING NEW TABLE AS changed_rows",
            f"interlock_notify_{table}",
        )
        for table in ("job", "external_task")
        for event in ("INSERT", "UPDATE")
    },
}

# The last step of the engine's write statement: the compare-and-swap updates matched `expected`
# rows, or the statement (and with it the transaction) fails.
EXPECT_ROWS_FUNCTION = """
CREATE FUNCTION interlock_expect_rows(matched bigint[], expected jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF to_jsonb(matched) IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'rows changed underneath the command: matched %, expected %',
            matched, expected USING ERRCODE = 'IL409';
    END IF;
END $$
"""


def _create_triggers(condition: str) -> None:
    for name, (table, event, referencing, function) in TRIGGERS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
        op.execute(
            f"CREATE TRIGGER {name} AFTER {event} ON {table} {referencing} "
            f"FOR EACH STATEMENT {condition} EXECUTE FUNCTION {function}()"
        )


def upgrade() -> None:
    _create_triggers(QUIET)
    op.execute(EXPECT_ROWS_FUNCTION)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS interlock_expect_rows(bigint[], jsonb)")
    _create_triggers("")
