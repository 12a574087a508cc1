"""The executed path: every visit records the sequence flow it was entered by, so an instance's
taken flows are counted exactly, loops, parallel joins and asynchronous continuations included."""

from __future__ import annotations

from uuid import UUID

from app.console.path import NodeLine, path_panel
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.queries import history, instances
from engine.states import InstanceState, JobOutcome


def _path_nodes(engine: Engine, instance_id: UUID, model: ProcessModel) -> list[NodeLine]:
    """The nodes of the inspector's history panel: the instance's visits counted per node."""
    visits = instances.visits(engine, instance_id)
    nodes: list[NodeLine] = path_panel(model, visits, history.taken_flows(engine, instance_id))[
        "path_nodes"
    ]
    return nodes


def test_a_loop_taken_three_times_counts_every_flow(engine: Engine) -> None:
    model = (
        ProcessBuilder("path-loop")
        .start_event("start")
        .service_task("count", expression="${n + 1}", result_variable="n")
        .exclusive_gateway("again", default="done")
        .end_event("end")
        .chain("start", "count", "again")
        .flow("again", "count", id="back", condition="${n < 4}")
        .flow("again", "end", id="done")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("path-loop", {"n": 0})
    assert instance.state is InstanceState.COMPLETED

    assert history.taken_flows(engine, instance.id) == {
        "Flow_count_again": 4,
        "Flow_start_count": 1,
        "back": 3,
        "done": 1,
    }
    visits = {
        line.node_id: (line.visits, line.ended) for line in _path_nodes(engine, instance.id, model)
    }
    assert visits == {"start": (1, 1), "count": (4, 4), "again": (4, 4), "end": (1, 1)}


def test_a_parallel_split_and_join_count_each_arrival_once(engine: Engine) -> None:
    model = (
        ProcessBuilder("path-parallel")
        .start_event("start")
        .parallel_gateway("fork")
        .task("a")
        .task("b", async_before=True)
        .user_task("c", "C")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "fork")
        .flow("fork", "a", id="to_a")
        .flow("fork", "b", id="to_b")
        .flow("fork", "c", id="to_c")
        .flow("a", "join", id="a_join")
        .flow("b", "join", id="b_join")
        .flow("c", "join", id="c_join")
        .chain("join", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("path-parallel")
    # b waits for its asynchronous continuation: its flow is taken, its visit not opened yet.
    assert history.taken_flows(engine, instance.id) == {
        "Flow_start_fork": 1,
        "a_join": 1,
        "to_a": 1,
        "to_b": 1,
        "to_c": 1,
    }
    [job] = engine.jobs(instance.id)
    assert engine.execute_job(job.id) is JobOutcome.EXECUTED
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED

    assert history.taken_flows(engine, instance.id) == {
        "Flow_join_end": 1,
        "Flow_start_fork": 1,
        "a_join": 1,
        "b_join": 1,
        "c_join": 1,
        "to_a": 1,
        "to_b": 1,
        "to_c": 1,
    }
    visits = {line.node_id: line.visits for line in _path_nodes(engine, instance.id, model)}
    # The join is visited once per arrival: the merged tokens' visits end there.
    assert visits == {"start": 1, "fork": 1, "a": 1, "b": 1, "c": 1, "join": 3, "end": 1}
    with engine.connection() as conn:
        entered = conn.execute(
            "SELECT node_id, flow_id FROM history WHERE instance_id = %s "
            "AND node_id IN ('start', 'join') ORDER BY node_id, flow_id",
            (instance.id,),
        ).fetchall()
    assert entered == [
        ("join", "a_join"),
        ("join", "b_join"),
        ("join", "c_join"),
        ("start", None),
    ]


def test_a_join_parked_before_it_runs_knows_the_flow_each_token_came_by(engine: Engine) -> None:
    model = (
        ProcessBuilder("path-async-join")
        .start_event("start")
        .parallel_gateway("fork")
        .task("a")
        .task("b")
        .parallel_gateway("join", async_before=True)
        .end_event("end")
        .chain("start", "fork")
        .chain("fork", "a", "join")
        .chain("fork", "b", "join")
        .chain("join", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("path-async-join")
    jobs = engine.jobs(instance.id)
    assert len(jobs) == 2
    for job in jobs:
        assert engine.execute_job(job.id) is JobOutcome.EXECUTED
    # Each token's job kept the flow it arrived by: the join saw both flows and fired.
    assert instance.state is InstanceState.COMPLETED
    assert history.taken_flows(engine, instance.id) == {
        "Flow_a_join": 1,
        "Flow_b_join": 1,
        "Flow_fork_a": 1,
        "Flow_fork_b": 1,
        "Flow_join_end": 1,
        "Flow_start_fork": 1,
    }
