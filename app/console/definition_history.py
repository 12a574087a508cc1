"""The definition page's history view: per node, the visits of a chosen period with their
average and 95th percentile durations and the incidents created in it, as a heatmap on the
diagram and a table. The page's URL carries the view (`view=now|heatmap|history`: the tokens and
open incidents now, the heatmap of every visit, or the history of a period) and the period
(`period=hour|day|7d|30d|custom`, `from` and `to` for a custom one)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from app.console.common import duration
from app.params import ParameterError, Query
from engine.api import Engine
from engine.model import ProcessModel
from engine.queries import history
from engine.queries.history import NodeHistory

VIEWS = ("now", "heatmap", "history")
# The page's one mode control: (view, label, what it shows).
MODES = (
    ("now", "Now", "Tokens and open incidents now"),
    ("heatmap", "Heatmap", "Visits and average durations of every instance of this version"),
    ("history", "History", "Visits, durations and incidents of a period"),
)
PERIODS: dict[str, timedelta | None] = {
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "custom": None,
}
PERIOD_LABELS = {
    "hour": "Last hour",
    "day": "Last day",
    "7d": "Last 7 days",
    "30d": "Last 30 days",
    "custom": "From … to …",
}
DEFAULT_PERIOD = "day"


@dataclass(frozen=True)
class Period:
    """The period [start, end) the history view covers, as the URL named it."""

    name: str
    start: datetime
    end: datetime

    def query(self) -> str:
        """The period's part of a URL query string (after the page's own parameters)."""
        fields = {"view": "history", "period": self.name}
        if self.name == "custom":
            fields |= {"from": self.start.isoformat(), "to": self.end.isoformat()}
        return urlencode(fields)


def view_of(query: Query) -> str:
    """The view the URL asks for, "now" by default."""
    return query.one_of("view", VIEWS) or "now"


def period_of(query: Query, now: datetime) -> Period | None:
    """The history period the URL asks for; None: the "now" or the "heatmap" view."""
    view = view_of(query)
    name = query.one_of("period", tuple(PERIODS)) or DEFAULT_PERIOD
    if view != "history":
        return None
    length = PERIODS[name]
    if length is not None:
        return Period(name, now - length, now)
    start, end = query.date("from"), query.date("to")
    if start is None:
        raise ParameterError("from", "", "is required for a custom period")
    if end is None:
        raise ParameterError("to", "", "is required for a custom period")
    if end <= start:
        raise ParameterError("to", end.isoformat(), "must be later than from")
    return Period(name, start, end)


def history_rows(
    engine: Engine, model: ProcessModel, definition_id: str, period: Period
) -> list[tuple[str, str, str, NodeHistory]]:
    """(node id, name, kind, its history) for every node of the model, in name order."""
    found = history.definition_history(engine, definition_id, period.start, period.end)
    by_node = {row.node_id: row for row in found}
    return sorted(
        (
            (n.id, n.label, n.kind.value, by_node.get(n.id, NodeHistory(n.id, 0, 0, None, None, 0)))
            for n in model.nodes
        ),
        key=lambda row: row[1].lower(),
    )


def history_state(
    definition_id: str, period: Period, rows: list[tuple[str, str, str, NodeHistory]]
) -> dict[str, Any]:
    """The diagram's state in the history view: each visited node's numbers."""
    return {
        "definition_id": definition_id,
        "history": {
            "period": period.name,
            "from": period.start.isoformat(),
            "to": period.end.isoformat(),
        },
        "nodes": {
            node_id: {
                "visits": h.visits,
                "average": duration(h.average_seconds) if h.average_seconds is not None else None,
                "p95": duration(h.p95_seconds) if h.p95_seconds is not None else None,
                "incidents": h.incidents,
            }
            for node_id, _, _, h in rows
            if h.visits or h.incidents
        },
    }
