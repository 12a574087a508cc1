"""The one Jinja2 environment (autoescaping on for every .html template).

Every template gets `csp_nonce`, the nonce of the response's Content-Security-Policy (set by
app.guard), for the few inline elements a page needs, and `static(path)`: the root-relative URL
of a file under /static. URLs in pages are never absolute: an absolute URL would be built from
the request's Host header, which the caller chooses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context
from starlette.requests import Request
from starlette.templating import Jinja2Templates

ROOT = Path(__file__).resolve().parent.parent


def security_context(request: Request) -> dict[str, Any]:
    return {"csp_nonce": request.scope.get("csp_nonce", "")}


templates = Jinja2Templates(directory=ROOT / "templates", context_processors=[security_context])


@pass_context
def url_for(context: Context, name: str, /, **path_params: Any) -> str:
    """Starlette's `url_for`, root-relative: the path only, without scheme and host."""
    request: Request = context["request"]
    return request.url_for(name, **path_params).path


@pass_context
def static(context: Context, path: str) -> str:
    return str(url_for(context, "static", path=path))


templates.env.globals["url_for"] = url_for
templates.env.globals["static"] = static
