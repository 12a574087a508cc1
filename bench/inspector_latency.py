"""Commit-to-screen latency of the instance inspector, in a real browser, with many pages open.

A console server runs in a subprocess (uvicorn, the real app with its event stream), over the
embedded PostgreSQL in a temporary folder or `--database-url`. Headless Chromium (Playwright)
opens `--pages` inspector pages, each in its own browser context (its own connections, as separate
browsers would have), spread over `--instances` running instances of a process that moves one
token around a cycle of two user tasks. A thread of this process completes the user task of one
instance after the other, round robin, at `--rate` commits a second, and notes the wall-clock
time each commit returned.

In every page a MutationObserver on the tokens panel notes (performance.timeOrigin +
performance.now()) each time the set of nodes holding a live token changes. A commit is visible
in a page when that page first shows the node the commit moved the token to; latency = that time
- the commit's return, over every (commit, page on its instance) pair. The pages also count their
requests besides the event stream: requests per page per commit (one commit = one burst of events
on the page's stream) and per event. Before the browsers, one refresh's server time is taken
without them: the header, each panel and the diagram's state one request each, against one
/live request.

`--tree PATH` serves the console of another checkout (its app, templates and static files) over
the same database, to measure an older refresh mechanism in the same run:

    python -m bench.inspector_latency [--pages 50] [--instances 50] [--rate 10] [--seconds 20]
        [--tree /path/to/other/checkout ...] [--database-url URL]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, Request, sync_playwright

from app.console.inspector import PANELS
from bench import serving
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateUser
from engine.db.database import Database
from engine.identity.accounts import Role

PROCESS_KEY = "inspector-latency"
# Pages in the background must not be throttled: every open inspector is measured.
CHROMIUM_ARGS = [
    *serving.CHROMIUM_ARGS,
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
# Notes, in the page, each change of the nodes that hold a live token in the tokens panel.
OBSERVE = """() => {
  const body = document.getElementById("tokens-body");
  const nodes = () => Array.from(body.querySelectorAll("tr.token-live[data-node]"))
    .map((row) => row.dataset.node).sort().join(",");
  window.benchSeen = [[performance.timeOrigin + performance.now(), nodes()]];
  window.benchEvents = [];
  document.addEventListener("interlock:event", () => {
    window.benchEvents.push(performance.timeOrigin + performance.now());
  });
  new MutationObserver(() => {
    const now = nodes();
    const seen = window.benchSeen;
    if (seen[seen.length - 1][1] !== now) {
      seen.push([performance.timeOrigin + performance.now(), now]);
    }
  }).observe(body, { childList: true, subtree: true, characterData: true, attributes: true });
}"""
EVENTS = "() => window.Interlock.received.filter(([seq, type]) => type !== 'ready').length"


# -- the server (subprocess) -----------------------------------------------------------------------


# -- the process and the writer --------------------------------------------------------------------


def deploy(engine: Engine, instances: int) -> list[UUID]:
    """Instances whose one token cycles between two user tasks, A and B, forever."""
    model = (
        ProcessBuilder(PROCESS_KEY, name="Inspector latency")
        .start_event("Start", "Start")
        .user_task("A", "Step A")
        .user_task("B", "Step B")
        .chain("Start", "A", "B", "A")
        .build()
    )
    engine.deploy(model)
    return [engine.start_latest(PROCESS_KEY).id for _ in range(instances)]


@dataclass(frozen=True)
class Commit:
    instance_id: UUID
    node: str  # where the commit moved the token
    at: float  # wall clock when the commit returned


def steady_commits(
    engine: Engine, instances: list[UUID], rate: float, seconds: float, out: list[Commit]
) -> None:
    """Complete the open user task of one instance after the other at `rate` a second."""
    total = int(rate * seconds)
    start = time.monotonic()
    for n in range(total):
        delay = start + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        instance_id = instances[n % len(instances)]
        (task,) = engine.user_tasks(instance_id)
        engine.complete_task(task.id)
        at = time.time()
        out.append(Commit(instance_id, "B" if task.node_id == "A" else "A", at))


# -- the browser -----------------------------------------------------------------------------------


@dataclass
class Viewer:
    instance_id: UUID
    context: BrowserContext
    page: Page
    requests: list[str] = field(default_factory=list)
    counting: list[bool] = field(default_factory=lambda: [False])

    def on_request(self, request: Request) -> None:
        if self.counting[0] and "/stream" not in request.url and "/static/" not in request.url:
            self.requests.append(request.url)


def open_viewer(browser: Browser, url: str, name: str, password: str, instance: UUID) -> Viewer:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=url)
    form = context.request.get("/login")
    fields = {"name": name, "password": password, "next": "/"}
    token = serving.login_token(form.text())
    response = context.request.post("/login", form={**fields, "login_token": token})
    if not response.ok:
        raise RuntimeError(f"log-in failed: {response.status}")
    page = context.new_page()
    page.set_default_timeout(60_000)
    viewer = Viewer(instance, context, page)
    page.on("request", viewer.on_request)
    page.goto(f"/instances/{instance}")
    return viewer


def server_times(url: str, login: tuple[str, str], instance: UUID, rounds: int) -> dict[str, Any]:
    """Median wall time of one inspector refresh as the old pages asked for it (the header, each
    panel and the diagram's state, one request each, one after the other) and as one /live
    request (None where the console has no /live)."""
    with httpx.Client(base_url=url) as client:
        serving.console_login(client, *login)
        base = f"/instances/{instance}"
        parts = [f"{base}/header", f"{base}/diagram.json"]
        parts += [f"{base}/panel/{name}" for name in PANELS]
        has_live = client.get(f"{base}/live").status_code == 200
        separate: list[float] = []
        together: list[float] = []
        for _ in range(rounds):
            start = time.perf_counter()
            for path in parts:
                client.get(path).raise_for_status()
            separate.append((time.perf_counter() - start) * 1000)
            if has_live:
                start = time.perf_counter()
                client.get(f"{base}/live").raise_for_status()
                together.append((time.perf_counter() - start) * 1000)
    return {
        "separate_ms": statistics.median(separate),
        "live_ms": statistics.median(together) if together else None,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(
    browser: Browser,
    engine: Engine,
    url: str,
    login: tuple[str, str],
    instances: list[UUID],
    pages: int,
    rate: float,
    seconds: float,
) -> dict[str, Any]:
    viewers = [
        open_viewer(browser, url, *login, instances[n % len(instances)]) for n in range(pages)
    ]
    try:
        for viewer in viewers:
            viewer.page.wait_for_selector("#live-status[data-state=live]")
            viewer.page.wait_for_selector("#diagram[data-ready=true]")
        viewers[-1].page.wait_for_timeout(1000)  # the refreshes of the pages' `ready` settle
        for viewer in viewers:
            viewer.page.evaluate(OBSERVE)
        events_before = [viewer.page.evaluate(EVENTS) for viewer in viewers]
        for viewer in viewers:
            viewer.counting[0] = True
        commits: list[Commit] = []
        writer = threading.Thread(
            target=steady_commits, args=(engine, instances, rate, seconds, commits)
        )
        started = time.monotonic()
        writer.start()
        while writer.is_alive():
            viewers[0].page.wait_for_timeout(100)  # lets Playwright deliver request events
        achieved = len(commits) / (time.monotonic() - started)
        viewers[0].page.wait_for_timeout(3000)
        for viewer in viewers:
            viewer.counting[0] = False
        latencies: list[float] = []
        arrivals: list[float] = []
        missing = 0
        requests: list[float] = []
        per_event: list[float] = []
        for viewer, before in zip(viewers, events_before, strict=True):
            seen: list[list[Any]] = viewer.page.evaluate("window.benchSeen")
            heard: list[float] = viewer.page.evaluate("window.benchEvents")
            mine = [c for c in commits if c.instance_id == viewer.instance_id]
            for commit in mine:
                shown = [at / 1000 for at, nodes in seen if nodes == commit.node]
                later = [at for at in shown if at >= commit.at - 0.002]
                if later:
                    latencies.append((later[0] - commit.at) * 1000)
                else:
                    missing += 1
                events = [at / 1000 for at in heard if at / 1000 >= commit.at - 0.002]
                if events:
                    arrivals.append((events[0] - commit.at) * 1000)
            events = viewer.page.evaluate(EVENTS) - before
            if mine:
                requests.append(len(viewer.requests) / len(mine))
            if events:
                per_event.append(len(viewer.requests) / events)
        return {
            "pages": pages,
            "instances": len(instances),
            "commits": len(commits),
            "rate": achieved,
            "event_p50_ms": percentile(arrivals, 0.50),
            "event_p99_ms": percentile(arrivals, 0.99),
            "p50_ms": percentile(latencies, 0.50),
            "p99_ms": percentile(latencies, 0.99),
            "max_ms": max(latencies),
            "mean_ms": statistics.fmean(latencies),
            "missing": missing,
            "requests_per_commit": statistics.fmean(requests),
            "requests_per_event": statistics.fmean(per_event),
        }
    finally:
        for viewer in viewers:
            viewer.context.close()


def run(
    database_url: str | None,
    trees: list[Path],
    pages: int,
    instance_count: int,
    rate: float,
    seconds: float,
) -> list[dict[str, Any]]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="inspector-latency-") as home:
        database = Database.open(database_url, home=Path(home))
        try:
            with Engine(database.url, pool_size=4) as engine:
                name = f"bench-{secrets.token_hex(4)}"
                password = secrets.token_urlsafe(12)
                engine.run(CreateUser(name, Role.VIEWER, password))
                instances = deploy(engine, instance_count)
                with sync_playwright() as playwright:
                    browser = playwright.chromium.launch(
                        executable_path=serving.CHROMIUM, args=CHROMIUM_ARGS
                    )
                    try:
                        for tree in trees:
                            server, url = serving.start(database.url, tree)
                            try:
                                timed = server_times(url, (name, password), instances[0], 30)
                                figures = measure(
                                    browser,
                                    engine,
                                    url,
                                    (name, password),
                                    instances,
                                    pages,
                                    rate,
                                    seconds,
                                )
                            finally:
                                serving.stop(server)
                            runs.append({"tree": str(tree), **timed, **figures})
                    finally:
                        browser.close()
        finally:
            database.close()
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=50, help="inspector pages open")
    parser.add_argument("--instances", type=int, default=50, help="instances the pages show")
    parser.add_argument("--rate", type=float, default=10.0, help="commits per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--tree",
        type=Path,
        nargs="+",
        default=[Path(__file__).resolve().parent.parent],
        help="checkouts whose console to measure, one after the other (default: this one)",
    )
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    runs = run(args.database_url, args.tree, args.pages, args.instances, args.rate, args.seconds)
    for r in runs:
        live = f"{r['live_ms']:.1f} ms" if r["live_ms"] is not None else "none"
        print(
            f"{r['tree']}: one inspector refresh, server: header + 8 panels + diagram state "
            f"{r['separate_ms']:.1f} ms one after the other; /live {live}"
        )
        print(
            f"{r['tree']}: {r['pages']} pages on {r['instances']} instances, "
            f"{r['commits']} commits at {r['rate']:.1f}/s; commit -> stream event "
            f"p50 {r['event_p50_ms']:.1f} ms, p99 {r['event_p99_ms']:.1f} ms; "
            "commit -> tokens panel "
            f"p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms, "
            f"missing {r['missing']}; requests per page per commit "
            f"{r['requests_per_commit']:.2f}, per event {r['requests_per_event']:.2f}"
        )


if __name__ == "__main__":
    main()
