"""Fixtures of the Camunda compatibility tests: a real server on 127.0.0.1 and an HTTP client
on its /engine-rest with HTTP Basic, as Camunda's clients authenticate."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.server import PASSWORD, LiveServer


@pytest.fixture
def rest(server: LiveServer) -> Iterator[httpx.Client]:
    """An admin's client on the server's /engine-rest."""
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
    ) as client:
        yield client


@pytest.fixture
def operator(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("operator", PASSWORD), timeout=30
    ) as client:
        yield client


def deploy(client: httpx.Client, *resources: tuple[str, str], **fields: str) -> dict[str, Any]:
    """POST /deployment/create with the resources (file name, XML) as multipart parts."""
    files = [
        (f"data{index}", (name, xml.encode(), "application/octet-stream"))
        for index, (name, xml) in enumerate(resources)
    ]
    data = {"deployment-name": "compat", **fields}
    response = client.post("/deployment/create", data=data, files=files)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def start(
    client: httpx.Client, key: str, variables: dict[str, Any] | None = None, **body: Any
) -> dict[str, Any]:
    response = client.post(
        f"/process-definition/key/{key}/start", json={"variables": variables or {}, **body}
    )
    assert response.status_code == 200, response.text
    started: dict[str, Any] = response.json()
    return started


def camunda_date(value: datetime) -> str:
    """A UTC time as Camunda writes dates, 2026-01-31T10:00:00.000+0000 (spelled out here, not
    taken from the code under test)."""
    assert value.utcoffset() == UTC.utcoffset(None), value
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}+0000"
