"""Visits ended canceled (history rows in state Terminated) are counted in the node summaries,
per definition and node, exactly through every way a visit ends so or its row goes: a
cancellation, an interrupting boundary event and the terminate end event after it, a
modification, a migration to another version (the count moves with the instance), the history
cleanup and a cascading deletion (the count goes with the rows). After each step the summaries
equal a recount of the history rows, and the historic activity statistics answer the count.
A database migrated down before the count and up again fills it from the visits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from engine.api import Engine
from engine.commands.cleanup import CleanupBatch
from engine.commands.definition_deletion import DeleteProcessDefinitions
from engine.commands.summaries import FoldSummaries
from engine.core.settings import EngineSettings
from engine.db import migrate
from engine.db.retention import RetentionSettings
from engine.queries.camunda import statistics
from engine.semantics.modification import CancelNode
from engine.states import InstanceState
from tests.engine.test_summaries import assert_exact, guarded_model


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False) as engine:
        yield engine


def canceled(url: str) -> dict[tuple[str, str], int]:
    """Visits ended canceled per (definition, node), as the summaries say; checked equal to
    the recount first."""
    counted = assert_exact(url)
    return {key: n.canceled_visits for key, n in counted.nodes.items() if n.canceled_visits}


def answered(engine: Engine, definition_id: str) -> dict[str, int]:
    """`canceled` of the historic activity statistics, per node that has any."""
    found = statistics.history(
        engine, definition_id, end_events=frozenset(), canceled=True, incidents=False
    )
    return {node: counts.canceled for node, counts in found.items() if counts.canceled}


def test_every_way_a_visit_ends_canceled_or_goes_keeps_the_count_exact(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(guarded_model())
    engine.deploy(guarded_model("second version"))
    v1, v2 = (row.id for row in sorted(engine.definitions("guarded"), key=lambda r: r.version))
    cancelled, timed_out, modified = (engine.start_version("guarded", 1) for _ in range(3))
    assert canceled(database_url) == {}

    # A cancellation ends both waiting visits canceled.
    assert cancelled.cancel() is InstanceState.TERMINATED
    assert canceled(database_url) == {(v1, "hold"): 1, (v1, "review"): 1}

    # The interrupting timer ends review's visit, its terminate end then hold's.
    (job,) = engine.jobs(timed_out.id)
    engine.run_job(job.id)
    assert timed_out.state.is_final
    assert canceled(database_url) == {(v1, "hold"): 2, (v1, "review"): 2}

    # A modification cancels hold's token; review still waits.
    engine.modify(modified.id, CancelNode("hold"))
    assert canceled(database_url) == {(v1, "hold"): 3, (v1, "review"): 2}
    assert answered(engine, v1) == {"hold": 3, "review": 2}

    # The migrated instance takes its canceled visit to the other version.
    engine.migrate(engine.migration_plan(v1, v2), [modified.id])
    assert canceled(database_url) == {(v1, "hold"): 2, (v1, "review"): 2, (v2, "hold"): 1}
    assert answered(engine, v2) == {"hold": 1}
    engine.run(FoldSummaries())
    assert canceled(database_url) == {(v1, "hold"): 2, (v1, "review"): 2, (v2, "hold"): 1}

    # The history cleanup deletes the two ended instances and their visits.
    retention = RetentionSettings(history_ttl_days=1, window=None, batch_size=20)
    with Engine(
        database_url,
        migrate=False,
        clock=lambda: datetime.now(UTC) + timedelta(days=2),
        settings=EngineSettings(retention=retention),
    ) as cleaner:
        assert cleaner.run(CleanupBatch()).instances == 2
    assert canceled(database_url) == {(v2, "hold"): 1}
    assert answered(engine, v1) == {}

    # Deleting the second version with its instances takes the last count.
    engine.run(DeleteProcessDefinitions(definition_id=v2, cascade=True))
    assert canceled(database_url) == {}
    engine.run(FoldSummaries())
    assert canceled(database_url) == {}


def test_the_migration_fills_the_count_from_the_visits(engine: Engine, database_url: str) -> None:
    engine.deploy(guarded_model())
    definition = engine.latest_definition("guarded").id
    engine.start_latest("guarded").cancel()
    engine.modify(engine.start_latest("guarded").id, CancelNode("review"))
    engine.run(FoldSummaries())
    assert canceled(database_url) == {(definition, "hold"): 1, (definition, "review"): 2}

    migrate.downgrade(database_url, "0039")
    migrate.upgrade(database_url)

    assert canceled(database_url) == {(definition, "hold"): 1, (definition, "review"): 2}
    # The visits' later changes count on top of the filled count.
    engine.start_latest("guarded").cancel()
    assert canceled(database_url) == {(definition, "hold"): 2, (definition, "review"): 3}
    assert answered(engine, definition) == {"hold": 2, "review": 3}
