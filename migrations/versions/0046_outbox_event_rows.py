"""outbox rows hold a command's events

Revision ID: 0046
Revises: 0045
Create Date: 2026-12-06 20:10:00.000000

One outbox row per command and instance, its events in a jsonb list (`events`), instead of one
row per event; an event's number is its row's seq times 1000 plus its place in the row, read
through the view outbox_event. Existing rows become rows of one event each, numbered their seq
times 1000, and the numbers kept elsewhere (webhook deliveries and the subscriptions' fan-out
cursors) are moved the same way.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0046"
down_revision: str | Sequence[str] | None = "0045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VIEW = """
CREATE VIEW outbox_event AS
SELECT o.seq * 1000 + e.place - 1 AS seq, o.seq AS row_seq, o.txid, e.event, o.instance_id,
    e.token_id, e.node_id, e.history_id, o.created_at, o.definition_key
FROM outbox o,
    ROWS FROM (jsonb_to_recordset(o.events) AS (event text, token_id uuid, node_id text,
        history_id uuid)) WITH ORDINALITY AS e(event, token_id, node_id, history_id, place)
"""


def upgrade() -> None:
    op.add_column("outbox", sa.Column("events", postgresql.JSONB(), nullable=True))
    op.execute(
        "UPDATE outbox SET events = jsonb_build_array(jsonb_strip_nulls(jsonb_build_object("
        "'event', event, 'token_id', token_id, 'node_id', node_id, 'history_id', history_id)))"
    )
    op.alter_column("outbox", "events", nullable=False)
    for column in ("event", "token_id", "node_id", "history_id"):
        op.drop_column("outbox", column)
    op.execute(_VIEW)
    op.execute("UPDATE webhook_delivery SET seq = seq * 1000")
    op.execute("UPDATE webhook_subscription SET fanned_out_seq = fanned_out_seq * 1000 + 999")


def downgrade() -> None:
    op.execute("DROP VIEW outbox_event")
    op.add_column("outbox", sa.Column("event", sa.String(length=40), nullable=True))
    op.add_column("outbox", sa.Column("token_id", sa.Uuid(), nullable=True))
    op.add_column("outbox", sa.Column("node_id", sa.Text(), nullable=True))
    op.add_column("outbox", sa.Column("history_id", sa.Uuid(), nullable=True))
    # A row of several events keeps its first: the older form has room for one.
    op.execute(
        "UPDATE outbox SET event = events->0->>'event', "
        "token_id = (events->0->>'token_id')::uuid, node_id = events->0->>'node_id', "
        "history_id = (events->0->>'history_id')::uuid"
    )
    op.alter_column("outbox", "event", nullable=False)
    op.drop_column("outbox", "events")
    # Deliveries of a row's later events have no row of their own in the older form.
    op.execute("DELETE FROM webhook_delivery WHERE seq % 1000 <> 0")
    op.execute("UPDATE webhook_delivery SET seq = seq / 1000")
    op.execute("UPDATE webhook_subscription SET fanned_out_seq = fanned_out_seq / 1000")
