"""bench/console_at_scale.py on a tiny fill: every declared GET route of the console, /api/v1 and
/engine-rest has a probe (or a reason in NOT_TIMED), and every probe answers as expected from the
real server over the generated rows."""

from __future__ import annotations

from starlette.routing import Route

from app import api, camunda, console
from bench.console_at_scale import admin_credentials, clients
from bench.scale_fill import Sizes, deploy, fill
from bench.scale_probes import NOT_TIMED, Sample, probes, sample
from bench.serving import serving
from engine.api import Engine


def declared_get_routes() -> set[tuple[str, str]]:
    found = {
        ("console", route.path)
        for route in console.routes
        if isinstance(route, Route) and "GET" in (route.methods or ())
    }
    found |= {("api", op.path) for op in api.OPERATIONS if op.method == "GET"}
    found |= {("camunda", e.path) for e in camunda.ENDPOINTS if e.method == "GET"}
    return found


def test_every_get_route_has_a_probe_and_every_probe_a_route() -> None:
    ids = Sample("d:1:x", "i-run", "i-end", "t", "e", "inc", "j")
    covered = {(p.surface, p.route) for p in probes(ids)}
    declared = declared_get_routes()
    assert declared - covered - set(NOT_TIMED) == set()
    assert covered - declared == set()
    assert set(NOT_TIMED) <= declared - covered


def test_every_probe_answers_on_a_small_fill(database_url: str) -> None:
    sizes = Sizes(instances=120, history_per_instance=10, active=12, outbox=50)
    with Engine(database_url, migrate=False, pool_size=2) as engine:
        definitions = deploy(engine)
        creds = admin_credentials(engine)
    fill(database_url, sizes, definitions, quiet=True)
    every = probes(sample(sizes, definitions))
    with serving(database_url) as base, clients(base, creds) as surfaces:
        answers = {p.path: surfaces[p.surface].get(p.path).status_code for p in every}
    wrong = {p.path: answers[p.path] for p in every if answers[p.path] != p.expect}
    assert wrong == {}
    assert len(answers) == len(every) > 250
