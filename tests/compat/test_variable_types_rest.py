"""/engine-rest's variable types as Camunda 7.24's REST reference gives them: every type round
trips through POST and PUT and back through GET, Object keeps its valueInfo, deserializeValues=false
answers the serialized form, the bytes of Bytes and File variables go in and out through the
multipart `.../data` endpoints (always a download), and what does not fit is refused 400 naming
the variable. The shapes below are spelled out from the reference, not taken from our DTO code.
Last, the console's inspector shows a File variable as a download link, never inline."""

from __future__ import annotations

import base64
import threading
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from engine.bpmn import write_bpmn
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.language.variables import FileValue
from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.compat.test_rest_shapes import _error, _json, _no_content
from tests.conftest import VIEWPORT
from tests.server import PASSWORD, LiveServer, login_token

# Camunda's date format in UTC (the reference's yyyy-MM-dd'T'HH:mm:ss.SSSZ).
WHEN = "2026-01-31T10:00:00.000+0000"
FILE_TEXT = "Bestellung: 3 × Äpfel\n".encode()
BYTES = bytes(range(256))
XML = '<?xml version="1.0"?><!DOCTYPE o [<!ENTITY x "boom">]><order id="1">&x;<item/></order>'
# Compact, keys in the order PostgreSQL's JSONB keeps them: the serialized form comes back as sent.
ORDER_JSON = '{"id":7,"lines":[{"qty":2,"sku":"A-1"}]}'
OBJECT_INFO = {"objectTypeName": "com.example.Order", "serializationDataFormat": "application/json"}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# What a client sends, by name.
SENT: dict[str, dict[str, Any]] = {
    "text": {"value": "hello", "type": "String"},
    "count": {"value": 7, "type": "Integer"},
    "small": {"value": 12, "type": "Short"},
    "big": {"value": 2**40, "type": "Long"},
    "ratio": {"value": 1.5, "type": "Double"},
    "flag": {"value": True, "type": "Boolean"},
    "nothing": {"value": None, "type": "Null"},
    "when": {"value": "2026-01-31T12:00:00.000+0200", "type": "Date"},
    "doc": {"value": '{"a":[1,2]}', "type": "Json"},
    "markup": {"value": XML, "type": "Xml"},
    "raw": {"value": b64(BYTES), "type": "Bytes"},
    "report": {
        "value": b64(FILE_TEXT),
        "type": "File",
        "valueInfo": {"filename": "bestellung.txt", "mimeType": "text/plain", "encoding": "UTF-8"},
    },
    "order": {"value": ORDER_JSON, "type": "Object", "valueInfo": OBJECT_INFO},
}

# What GET answers (deserializeValues=true, the default), by name.
ANSWERED: dict[str, dict[str, Any]] = {
    "text": {"type": "String", "value": "hello", "valueInfo": {}},
    "count": {"type": "Integer", "value": 7, "valueInfo": {}},
    "small": {"type": "Short", "value": 12, "valueInfo": {}},
    "big": {"type": "Long", "value": 2**40, "valueInfo": {}},
    "ratio": {"type": "Double", "value": 1.5, "valueInfo": {}},
    "flag": {"type": "Boolean", "value": True, "valueInfo": {}},
    "nothing": {"type": "Null", "value": None, "valueInfo": {}},
    "when": {"type": "Date", "value": WHEN, "valueInfo": {}},
    "doc": {"type": "Json", "value": '{"a":[1,2]}', "valueInfo": {}},
    "markup": {"type": "Xml", "value": XML, "valueInfo": {}},
    "raw": {"type": "Bytes", "value": b64(BYTES), "valueInfo": {}},
    # A File's bytes never travel in the variable's answer, only at /data.
    "report": {
        "type": "File",
        "value": None,
        "valueInfo": {"filename": "bestellung.txt", "mimeType": "text/plain", "encoding": "UTF-8"},
    },
    "order": {
        "type": "Object",
        "value": {"id": 7, "lines": [{"sku": "A-1", "qty": 2}]},
        "valueInfo": OBJECT_INFO,
    },
}
# deserializeValues=false: the Object's serialized form, every other value as before.
SERIALIZED = {**ANSWERED, "order": {**ANSWERED["order"], "value": ORDER_JSON}}


def waiting(rest: httpx.Client) -> str:
    """A fresh instance of `approval`, waiting at its user task."""
    deploy(rest, ("approval.bpmn", processes.approval()))
    return str(start(rest, "approval")["id"])


def task_of(rest: httpx.Client, instance_id: str) -> str:
    [task] = _json(rest.get("/task", params={"processInstanceId": instance_id}))
    return str(task["id"])


def assert_download(response: httpx.Response, content: bytes, media: str, filename: str) -> None:
    """The bytes as a download: the type given, saved under `filename`, never sniffed."""
    assert response.status_code == 200, response.text
    assert response.content == content
    assert response.headers["content-type"] == media
    assert response.headers["content-disposition"] == f'attachment; filename="{filename}"'
    assert response.headers["x-content-type-options"] == "nosniff"


def test_every_type_round_trips_through_post_put_and_get(rest: httpx.Client) -> None:
    instance_id = waiting(rest)
    base = f"/process-instance/{instance_id}/variables"
    _no_content(rest.post(base, json={"modifications": SENT}))
    assert _json(rest.get(base)) == ANSWERED
    assert _json(rest.get(base, params={"deserializeValues": "false"})) == SERIALIZED
    for name, expected in ANSWERED.items():
        assert _json(rest.get(f"{base}/{name}")) == expected, name
        assert (
            _json(rest.get(f"{base}/{name}", params={"deserializeValues": "false"}))
            == (SERIALIZED[name])
        ), name

    # PUT each again (a new instance), then read them back one by one and all together.
    other = start(rest, "approval")["id"]
    for name, dto in SENT.items():
        _no_content(rest.put(f"/process-instance/{other}/variables/{name}", json=dto))
    assert _json(rest.get(f"/process-instance/{other}/variables")) == ANSWERED

    # Starting with them answers the same with withVariablesInReturn.
    started = start(rest, "approval", SENT, withVariablesInReturn=True)
    assert started["variables"] == ANSWERED


def test_handlers_see_natural_python_values(server: LiveServer, rest: httpx.Client) -> None:
    seen: dict[str, Any] = {}
    done = threading.Event()

    def inspect(context: TaskContext) -> None:
        seen.update(context.variables)
        context.set("copy", context.variables["raw"][::-1])
        done.set()

    server.engine.register_handler("inspectTypes", inspect)
    model = (
        ProcessBuilder("typed_handler")
        .start_event("start")
        .user_task("wait", "Wait")
        .service_task("look", handler="inspectTypes")
        .user_task("after", "After")
        .end_event("end")
        .chain("start", "wait", "look", "after", "end")
        .build()
    )
    deploy(rest, ("typed.bpmn", write_bpmn([model])))
    instance_id = start(rest, "typed_handler", SENT)["id"]
    _no_content(rest.post(f"/task/{task_of(rest, instance_id)}/complete", json={}))
    assert done.wait(30)
    assert seen["raw"] == BYTES
    assert seen["report"] == FileValue("bestellung.txt", FILE_TEXT, "text/plain", "UTF-8")
    assert seen["when"] == datetime(2026, 1, 31, 10, 0, tzinfo=UTC)
    assert seen["order"] == {"id": 7, "lines": [{"sku": "A-1", "qty": 2}]}
    assert seen["markup"] == XML and seen["small"] == 12
    # What a handler sets from bytes is a Bytes variable.
    assert _json(rest.get(f"/process-instance/{instance_id}/variables/copy")) == {
        "type": "Bytes",
        "value": b64(BYTES[::-1]),
        "valueInfo": {},
    }


def test_scripts_see_bytes_as_base64_and_files_as_objects(rest: httpx.Client) -> None:
    script = (
        'execution.setVariable("seen", [typeof raw, raw.length, report.filename, '
        "report.mimeType, report.data, order.lines[0].sku].join('|'))"
    )
    model = (
        ProcessBuilder("typed_script")
        .start_event("start")
        .script_task("look", script=script)
        .user_task("after", "After")
        .end_event("end")
        .chain("start", "look", "after", "end")
        .build()
    )
    deploy(rest, ("script.bpmn", write_bpmn([model])))
    instance_id = start(rest, "typed_script", SENT)["id"]
    seen = _json(rest.get(f"/process-instance/{instance_id}/variables/seen"))
    assert seen["value"] == "|".join(
        ["string", str(len(b64(BYTES))), "bestellung.txt", "text/plain", b64(FILE_TEXT), "A-1"]
    )
    # The script changed none of them: they keep their types.
    assert _json(rest.get(f"/process-instance/{instance_id}/variables/raw")) == ANSWERED["raw"]


def test_task_and_variable_instance_reads_take_deserialize_values(rest: httpx.Client) -> None:
    instance_id = waiting(rest)
    task_id = task_of(rest, instance_id)
    order = {"order": SENT["order"]}
    _no_content(rest.post(f"/task/{task_id}/localVariables", json={"modifications": order}))
    serialized = {"deserializeValues": "false"}
    for path in (f"/task/{task_id}/variables", f"/task/{task_id}/localVariables"):
        assert _json(rest.get(path))["order"] == ANSWERED["order"]
        assert _json(rest.get(path, params=serialized))["order"] == SERIALIZED["order"]
        assert _json(rest.get(f"{path}/order")) == ANSWERED["order"]
        assert _json(rest.get(f"{path}/order", params=serialized)) == SERIALIZED["order"]
    form = f"/task/{task_id}/form-variables"
    assert _json(rest.get(form))["order"] == ANSWERED["order"]
    assert _json(rest.get(form, params=serialized))["order"] == SERIALIZED["order"]
    for path in ("/variable-instance", "/history/variable-instance"):
        query = {"processInstanceIdIn": instance_id, "variableName": "order"}
        if path.startswith("/history"):
            query = {"processInstanceId": instance_id, "variableName": "order"}
        [row] = _json(rest.get(path, params=query))
        assert (row["type"], row["value"], row["valueInfo"]) == (
            "Object",
            ANSWERED["order"]["value"],
            OBJECT_INFO,
        )
        [row] = _json(rest.get(path, params={**query, **serialized}))
        assert row["value"] == ORDER_JSON


def test_fetch_and_lock_gives_objects_serialized_unless_a_topic_asks(rest: httpx.Client) -> None:
    deploy(rest, ("charge.bpmn", processes.external_then_review()))
    start(rest, "charge", {"order": SENT["order"], "raw": SENT["raw"]})
    start(rest, "charge", {"order": SENT["order"]})

    def fetch(**topic: Any) -> dict[str, Any]:
        body = {
            "workerId": "w",
            "maxTasks": 1,
            "topics": [{"topicName": "charge-card", "lockDuration": 10_000, **topic}],
        }
        [task] = _json(rest.post("/external-task/fetchAndLock", json=body))
        variables: dict[str, Any] = task["variables"]
        return variables

    first = fetch()
    assert first["order"] == SERIALIZED["order"]
    if "raw" in first:
        assert first["raw"] == ANSWERED["raw"]
    assert fetch(deserializeValues=True)["order"] == ANSWERED["order"]


def test_data_endpoints_take_and_serve_bytes_and_files(rest: httpx.Client) -> None:
    instance_id = waiting(rest)
    base = f"/process-instance/{instance_id}/variables"
    csv = b"sku;qty\nA-1;2\n"
    _no_content(
        rest.post(
            f"{base}/sheet/data",
            files={"data": ("stock.csv", csv, "text/csv; encoding=ISO-8859-1")},
            data={"valueType": "File"},
        )
    )
    assert _json(rest.get(f"{base}/sheet")) == {
        "type": "File",
        "value": None,
        "valueInfo": {"filename": "stock.csv", "mimeType": "text/csv", "encoding": "ISO-8859-1"},
    }
    assert_download(
        rest.get(f"{base}/sheet/data"), csv, "text/csv; charset=ISO-8859-1", "stock.csv"
    )

    # No valueType: Bytes, served as octet-stream under the variable's name.
    _no_content(rest.post(f"{base}/blob/data", files={"data": ("x.bin", BYTES)}))
    assert _json(rest.get(f"{base}/blob")) == {
        "type": "Bytes",
        "value": b64(BYTES),
        "valueInfo": {},
    }
    assert_download(rest.get(f"{base}/blob/data"), BYTES, "application/octet-stream", "blob")

    # A `type` part: the JSON data is an Object of that type.
    _no_content(
        rest.post(
            f"{base}/order/data",
            files={"data": ("order.json", ORDER_JSON.encode(), "application/json")},
            data={"type": "com.example.Order"},
        )
    )
    assert _json(rest.get(f"{base}/order")) == ANSWERED["order"]

    # JSON-set values are served the same way; an HTML file is still only a download.
    page = b"<html><script>alert(1)</script></html>"
    html = {
        "value": b64(page),
        "type": "File",
        "valueInfo": {"filename": "page.html", "mimeType": "text/html"},
    }
    _no_content(rest.put(f"{base}/page", json=html))
    served = rest.get(f"{base}/page/data")
    assert_download(served, page, "text/html", "page.html")
    assert "sandbox" in served.headers["content-security-policy"]
    _no_content(rest.put(f"{base}/raw", json=SENT["raw"]))
    # A binary value is never matched by a variable filter, its base64 text included.
    short = {"value": b64(b"\x00\x01\x02\xff"), "type": "Bytes"}
    _no_content(rest.put(f"{base}/tiny", json=short))
    for op in ("eq", "like"):
        found = rest.get("/process-instance", params={"variables": f"tiny_{op}_{short['value']}"})
        assert _json(found) == []
    _no_content(rest.put(f"{base}/label", json={"value": "tiny", "type": "String"}))
    [labelled] = _json(rest.get("/process-instance", params={"variables": "label_eq_tiny"}))
    assert labelled["id"] == instance_id
    assert_download(rest.get(f"{base}/raw/data"), BYTES, "application/octet-stream", "raw")

    # The same through a task, its own scope and the variable instance ids.
    task_id = task_of(rest, instance_id)
    _no_content(
        rest.post(
            f"/task/{task_id}/localVariables/scan/data",
            files={"data": ("scan.pdf", b"%PDF-1.7 ...", "application/pdf")},
            data={"valueType": "File"},
        )
    )
    _no_content(rest.post(f"/task/{task_id}/variables/note/data", files={"data": ("n", b"n!")}))
    for path in (
        f"/task/{task_id}/localVariables/scan/data",
        f"/task/{task_id}/variables/scan/data",
    ):
        assert_download(rest.get(path), b"%PDF-1.7 ...", "application/pdf", "scan.pdf")
    assert_download(
        rest.get(f"/task/{task_id}/variables/note/data"), b"n!", "application/octet-stream", "note"
    )
    # The task's variables/{name} placed `note` where it goes: the instance's scope.
    assert _json(rest.get(f"{base}/note"))["type"] == "Bytes"
    _error(rest.get(f"/task/{task_id}/localVariables/note/data"), 404, "InvalidRequestException")

    [scan] = _json(
        rest.get(
            "/variable-instance",
            params={"processInstanceIdIn": instance_id, "variableName": "scan"},
        )
    )
    assert scan["valueInfo"]["filename"] == "scan.pdf" and scan["value"] is None
    for path in (
        f"/variable-instance/{scan['id']}/data",
        f"/history/variable-instance/{scan['id']}/data",
    ):
        assert_download(rest.get(path), b"%PDF-1.7 ...", "application/pdf", "scan.pdf")
    [historic] = _json(
        rest.get(
            "/history/variable-instance",
            params={"processInstanceId": instance_id, "variableName": "sheet"},
        )
    )
    assert_download(
        rest.get(f"/history/variable-instance/{historic['id']}/data"),
        csv,
        "text/csv; charset=ISO-8859-1",
        "stock.csv",
    )
    unknown = "00000000-0000-4000-8000-000000000000"
    _error(rest.get(f"/variable-instance/{unknown}/data"), 404, "InvalidRequestException")
    _error(rest.get(f"/history/variable-instance/{unknown}/data"), 404, "InvalidRequestException")


@pytest.mark.parametrize(
    ("dto", "said"),
    [
        (
            {"value": "rO0ABXQAA2FiYw==", "type": "Object",
             "valueInfo": {"serializationDataFormat": "application/x-java-serialized-object",
                           "objectTypeName": "java.lang.String"}},
            "application/x-java-serialized-object",
        ),
        ({"value": "%%% not base64", "type": "Bytes"}, "base64"),
        ({"value": b64(b"x"), "type": "File", "valueInfo": {}}, "filename"),
        (
            {"value": b64(b"x"), "type": "File",
             "valueInfo": {"filename": "a", "mimeType": "text/html\r\nX-Evil: 1"}},
            "mimeType",
        ),
        ({"value": b64(bytes(512 * 1024 + 1)), "type": "Bytes"}, "524288"),
        ({"value": 5, "type": "Xml"}, "String"),
        ({"value": "x", "type": "Blob"}, "Unsupported value type"),
    ],
)  # fmt: skip
def test_values_that_do_not_fit_are_refused_naming_the_variable(
    rest: httpx.Client, dto: dict[str, Any], said: str
) -> None:
    instance_id = waiting(rest)
    base = f"/process-instance/{instance_id}/variables"
    body = _error(rest.put(f"{base}/wrong", json=dto), 400, "InvalidRequestException", said)
    assert "wrong" in body["message"]
    _error(
        rest.post(base, json={"modifications": {"wrong": dto}}),
        400,
        "InvalidRequestException",
        "'wrong'",
    )
    assert "wrong" not in _json(rest.get(base))


def test_data_endpoints_refuse_what_is_not_binary(rest: httpx.Client) -> None:
    instance_id = waiting(rest)
    base = f"/process-instance/{instance_id}/variables"
    _no_content(rest.put(f"{base}/text", json=SENT["text"]))
    _error(rest.get(f"{base}/text/data"), 400, "InvalidRequestException", "'text'")
    _error(rest.get(f"{base}/missing/data"), 404, "InvalidRequestException", "missing")
    task_id = task_of(rest, instance_id)
    _error(rest.get(f"/task/{task_id}/variables/text/data"), 400, "InvalidRequestException", "text")

    def post(name: str, **parts: Any) -> httpx.Response:
        return rest.post(f"{base}/{name}/data", **parts)

    _error(
        post("kind", files={"data": ("a", b"x")}, data={"valueType": "String"}),
        400,
        "InvalidRequestException",
        "'kind'",
    )
    _error(post("empty", data={"valueType": "Bytes"}), 400, "InvalidRequestException", "'empty'")
    _error(
        post("obj", files={"data": ("o", b"{}", "text/plain")}, data={"type": "com.x.O"}),
        400,
        "InvalidRequestException",
        "'obj'",
    )
    _error(
        post("huge", files={"data": ("h", bytes(512 * 1024 + 1))}),
        400,
        "InvalidRequestException",
        "'huge'",
    )
    _error(
        post("nameless", files={"data": (None, b"x", "text/plain")}, data={"valueType": "File"}),
        400,
        "InvalidRequestException",
        "'nameless'",
    )
    assert set(_json(rest.get(base))) == {"text"}


@pytest.mark.browser
def test_a_file_variable_is_a_download_link_in_the_inspector(
    server: LiveServer, rest: httpx.Client, browser: Browser
) -> None:
    instance_id = waiting(rest)
    page_html = b"<html><body><h1 id=injected>inline!</h1></body></html>"
    file_dto = {
        "value": b64(page_html),
        "type": "File",
        "valueInfo": {"filename": "report.html", "mimeType": "text/html"},
    }
    _no_content(rest.put(f"/process-instance/{instance_id}/variables/report", json=file_dto))
    _no_content(rest.put(f"/process-instance/{instance_id}/variables/raw", json=SENT["raw"]))

    context = browser.new_context(viewport=VIEWPORT, base_url=server.url, accept_downloads=True)
    try:
        form = context.request.get("/login")
        signed_in = context.request.post(
            "/login",
            form={
                "name": "operator",
                "password": PASSWORD,
                "next": "/",
                "login_token": login_token(form.text()),
            },
        )
        assert signed_in.ok, signed_in.status
        page = context.new_page()
        page.goto(f"/instances/{instance_id}")
        row = page.locator('#variables-body tr[data-variable="report"]')
        link = row.locator("a.download")
        expect(link).to_have_text(f"report.html ({len(page_html)} bytes, text/html)")
        expect(link).to_have_attribute("download", "")
        expect(link).to_have_attribute(
            "href", f"/instances/{instance_id}/variables/data?name=report"
        )
        # Never inline: neither the file's markup nor an editor holding it is on the page.
        expect(page.locator("#injected")).to_have_count(0)
        expect(row.locator("textarea")).to_have_count(0)
        expect(page.locator('#variables-body tr[data-variable="raw"] a.download')).to_have_text(
            "256 bytes"
        )
        with page.expect_download() as started:
            link.click()
        download = started.value
        assert download.suggested_filename == "report.html"
        with open(download.path(), "rb") as saved:
            assert saved.read() == page_html
        # The console's route answers as /engine-rest's does.
        served = context.request.get(f"/instances/{instance_id}/variables/data?name=report")
        assert served.headers["content-disposition"] == 'attachment; filename="report.html"'
        assert served.headers["x-content-type-options"] == "nosniff"
        assert served.headers["content-type"] == "text/html"
        missing = context.request.get(f"/instances/{instance_id}/variables/data?name=nothing")
        assert missing.status == 404
    finally:
        context.close()
