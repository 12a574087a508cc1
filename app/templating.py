"""The one Jinja2 environment (autoescaping on for every .html template)."""

from __future__ import annotations

from pathlib import Path

from starlette.templating import Jinja2Templates

ROOT = Path(__file__).resolve().parent.parent
templates = Jinja2Templates(directory=ROOT / "templates")
