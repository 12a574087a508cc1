"""Screenshots of the console in its light and dark themes at 1440x900: the overview, the instance
list, an instance's inspector, the incidents grouped by node and message and the stuck-instance
alerts, as PNG files in a folder.

    python -m bench.screenshots FOLDER [--database-url URL]

Without a database URL it runs on a new embedded server of its own, deploys a small process,
starts a few instances (one with a JSON variable, one with an incident) and serves the console on
127.0.0.1; the pictures are taken with Chromium through Playwright. `capture` is also what the
dark-theme browser test calls, on its own server.
"""

from __future__ import annotations

import argparse
import re
import threading
import time
from pathlib import Path
from typing import Literal

from playwright.sync_api import Browser, sync_playwright

from bench import serving
from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.alerts import SetAlertThreshold
from engine.identity.accounts import Role
from engine.states import AlertKind

PAGES = ("overview", "instances", "inspector", "incidents", "alerts")
THEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
USER = "screenshots"
PASSWORD = "screenshots-password"


def capture(
    browser: Browser, base_url: str, folder: Path, instance_id: str, user: str, password: str
) -> list[Path]:
    """PNGs of PAGES in THEMES (`overview-dark.png`...), logged in as `user`; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    paths = {
        "overview": "/",
        "instances": "/instances",
        "inspector": f"/instances/{instance_id}",
        "incidents": "/incidents?group=node",
        "alerts": "/alerts",
    }
    for theme in THEMES:
        context = browser.new_context(
            viewport={"width": 1440, "height": 900}, base_url=base_url, color_scheme=theme
        )
        try:
            page = context.new_page()
            page.goto("/login")
            page.get_by_label("User").fill(user)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(re.compile(r".*/$"))
            for name in PAGES:
                page.goto(paths[name])
                page.locator('#live-status[data-state="live"]').wait_for()
                if name == "inspector":
                    page.locator('#diagram[data-ready="true"]').wait_for()
                target = folder / f"{name}-{theme}.png"
                page.screenshot(path=str(target), full_page=True)
                written.append(target)
        finally:
            context.close()
    return written


def sample_data(engine: Engine) -> str:
    """A process with a user task, a JSON variable and an external task that failed; returns
    the id of the instance the inspector shows."""
    engine.deploy(
        ProcessBuilder("order-fulfilment", name="Order fulfilment")
        .start_event("Start", "Order received")
        .parallel_gateway("Split", "Split")
        .user_task("Pack", "Pack goods")
        .service_task("Charge", "Charge card", topic="charge")
        .parallel_gateway("Join", "Join")
        .end_event("End", "Shipped")
        .chain("Start", "Split")
        .chain("Split", "Pack", "Join")
        .chain("Split", "Charge", "Join")
        .chain("Join", "End")
        .build()
    )
    order = {"customer": {"name": "Ada", "tier": "gold"}, "lines": [{"sku": "A-1", "qty": 2}]}
    shown = engine.start_latest("order-fulfilment", {"order": order}, business_key="order-1001")
    for n in range(2, 6):
        engine.start_latest("order-fulfilment", {"n": n}, business_key=f"order-100{n}")
    [task] = engine.fetch_and_lock("screenshots", {"charge": 60_000}, max_tasks=1)
    engine.fail_external_task(task["id"], "screenshots", "card declined")
    # Packing that waits longer than a second is an alert by the time the pictures are taken.
    engine.run(SetAlertThreshold("order-fulfilment", "Pack", AlertKind.WAITING, "PT1S"))
    return str(shown.id)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.screenshots", description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    import uvicorn

    from app.main import create_app
    from app.settings import Settings
    from engine.commands.accounts import CreateUser

    with scratch_engine(args.database_url) as engine:
        engine.run(CreateUser(USER, Role.OPERATOR, PASSWORD))
        instance_id = sample_data(engine)
        port = serving.free_port()
        settings = Settings(
            database_url=engine.database.url, auth=True, run_jobs=False, secret="screenshots"
        )
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings, engine), host="127.0.0.1", port=port, log_level="warning"
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=serving.CHROMIUM, args=serving.CHROMIUM_ARGS
                )
                written = capture(
                    browser, f"http://127.0.0.1:{port}", args.folder, instance_id, USER, PASSWORD
                )
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=20)
    for path in written:
        print(path)


if __name__ == "__main__":
    main()
