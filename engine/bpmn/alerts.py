"""The stuck-instance alert thresholds a node declares as camunda:properties, checked when the
model is read: a value that is no duration is refused naming the file, the property's line and
the node (the thresholds themselves are read from the node's properties at deployment,
engine/commands/alerts.py)."""

from __future__ import annotations

from engine.bpmn.reading import Context, Element, bpmn_tag, camunda_tag
from engine.language.alerts import PROPERTY_PREFIX, declared_thresholds


def check_alert_properties(element: Element, ctx: Context, node_id: str | None) -> None:
    for extensions in element.findall(bpmn_tag("extensionElements")):
        for group in extensions.findall(camunda_tag("properties")):
            for item in group.findall(camunda_tag("property")):
                name = item.get("name") or ""
                if not name.startswith(PROPERTY_PREFIX):
                    continue
                try:
                    declared_thresholds([(name, item.get("value") or "")])
                except ValueError as exc:
                    raise ctx.error(str(exc), item, node_id) from None
