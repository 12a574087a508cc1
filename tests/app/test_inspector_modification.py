"""The inspector's token modification over HTTP: an operator previews and applies it, a viewer
sees no controls and is refused, a POST without the CSRF token is refused."""

from __future__ import annotations

import json

from tests.api.test_sessions import Browser
from tests.engine.modification_support import forked, positions, rows
from tests.server import LiveServer


def test_an_operator_previews_and_applies_a_modification(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(forked("console-fork"))
    instance = engine.start_latest("console-fork")
    [at_a] = [t for t in engine.instance(instance.id).tokens() if t.node_id == "a"]
    move = json.dumps(
        [{"op": "cancel", "token": str(at_a.token_id)}, {"op": "before", "node": "after"}]
    )
    operator, viewer = Browser(server.url, "operator"), Browser(server.url, "viewer")
    try:
        page = operator.get(f"/instances/{instance.id}").text
        assert 'id="modify"' in page and "modify.js" in page
        assert 'data-modify-op="move"' in page
        shown = viewer.get(f"/instances/{instance.id}").text
        assert 'id="modify"' not in shown and "modify.js" not in shown

        before = rows(engine, instance.id)
        preview = operator.post(
            f"/instances/{instance.id}/modify/preview", data={"instructions": move}
        )
        assert preview.status_code == 200, preview.text
        assert """data-tokens='{"after": 1, "b": 1}'""" in preview.text
        assert rows(engine, instance.id) == before

        for refused, status in (
            (viewer.post(f"/instances/{instance.id}/modify", data={"instructions": move}), 403),
            (
                operator.post(
                    f"/instances/{instance.id}/modify",
                    data={"instructions": move},
                    headers={"X-CSRF-Token": "forged"},
                ),
                403,
            ),
            (
                operator.post(
                    f"/instances/{instance.id}/modify",
                    data={"instructions": '[{"op": "before", "node": "nowhere"}]'},
                ),
                400,
            ),
            (operator.post(f"/instances/{instance.id}/modify", data={"instructions": "[]"}), 400),
        ):
            assert refused.status_code == status, refused.text
        assert rows(engine, instance.id) == before

        applied = operator.post(
            f"/instances/{instance.id}/modify",
            data={"instructions": move, "annotation": "from the console"},
        )
        assert applied.status_code == 200, applied.text
        assert "Modification applied (Active): tokens at after (1), b (1)." in applied.text
        assert positions(engine, instance.id) == {"after": 1, "b": 1}
        with engine.pool.connection() as conn:
            entries = conn.execute(
                "SELECT user_id, channel, annotation FROM audit_entry WHERE instance_id = %s",
                (instance.id,),
            ).fetchall()
        assert entries == [("operator", "console", "from the console")]
    finally:
        operator.close()
        viewer.close()
