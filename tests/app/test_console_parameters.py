"""The console pages read their query parameters with the shared readers: a filter that does not
read shows the page with the error in place (its rows fragment answers 400), naming the
parameter."""

from __future__ import annotations

import httpx

from tests.server import LiveServer, console_login


def cookies_of(server: LiveServer) -> dict[str, str]:
    login = console_login(server.url, "viewer")
    return {"interlock_session": login.cookies["interlock_session"]}


def test_console_filters_that_do_not_read_name_the_parameter(server: LiveServer) -> None:
    cookies = cookies_of(server)

    def get(path: str, **params: str) -> httpx.Response:
        return httpx.get(f"{server.url}{path}", params=params, cookies=cookies)

    fine = get("/instances", version=" 2 ", started_from="2025-01-31T12:00", incident="yes")
    assert fine.status_code == 200 and "query parameter" not in fine.text
    assert 'value="2"' in fine.text and 'value="2025-01-31T12:00"' in fine.text

    for params, name, words in (
        ({"version": "two"}, "version", "must be an integer"),
        ({"version": "99999999999"}, "version", "must be between -2147483648 and 2147483647"),
        ({"started_from": "yesterday"}, "started_from", "must be a date and time"),
        ({"started_to": "2025-13-01"}, "started_to", "must be a date and time"),
    ):
        page = get("/instances", **params)
        assert page.status_code == 200, page.text
        assert f"query parameter &#39;{name}&#39; {words}" in page.text, params
        rows = get("/instances", fragment="rows", **params)
        assert rows.status_code == 400, params
        assert f"query parameter &#39;{name}&#39; {words}" in rows.text, params

    refused = get("/definitions/anything", version="two")
    assert refused.status_code == 400, refused.text
    assert "query parameter" in refused.text and "version" in refused.text
