"""Scripts kept in files of their own: `camunda:resource` on a script task, a `camunda:script`
(its `resource` attribute) or a condition names another file of the same deployment.

A deployment reads each such file once and writes its text into the BPMN it stores, as the
attribute `EMBEDDED_SCRIPT` of the element that names it (an attribute, so that no line of the
document moves and error messages keep the lines of the file as written). The stored definition
is then complete on its own: reading it again, after a restart, needs no other file.
"""

from __future__ import annotations

from collections.abc import Mapping

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.reading import (
    ACTIVITI_NS,
    CAMUNDA_NS,
    EMBEDDED_SCRIPT,
    SAFE_PARSER,
    Element,
    load_bytes,
)
from engine.errors import ModelError

# Files of a deployment that are scripts, not BPMN: never parsed as a process.
SCRIPT_SUFFIXES = (".js", ".mjs", ".javascript", ".groovy", ".py", ".rb", ".juel", ".txt")
DEPLOYMENT_SCHEME = "deployment://"
CLASSPATH_SCHEME = "classpath://"


def is_script_resource(name: str) -> bool:
    return name.lower().endswith(SCRIPT_SUFFIXES)


def _named(element: Element) -> str | None:
    """The resource an element names: camunda:resource on a script task or a condition,
    `resource` on a camunda:script."""
    for namespace in (CAMUNDA_NS, ACTIVITI_NS):
        value = element.get(f"{{{namespace}}}resource")
        if value is not None:
            return str(value)
        if element.tag in (f"{{{namespace}}}script",):
            found = element.get("resource")
            if found is not None:
                return str(found)
    return None


def _owner_id(element: Element) -> str | None:
    current = element
    while current is not None:
        if current.get("id"):
            return str(current.get("id"))
        current = current.getparent()
    return None


def embed_scripts(content: bytes, file: str, resources: Mapping[str, bytes]) -> bytes:
    """`content` with the text of every script resource it names embedded (see the module
    docstring); unchanged when it names none. A resource that is not in `resources`, a
    `classpath://` one, or one that is not UTF-8 text fails with a ModelError naming file, line
    and element."""
    if b"resource" not in content:
        return content
    root = load_bytes(content, file, SAFE_PARSER)
    changed = False
    for element in root.iter(etree.Element):
        name = _named(element)
        if name is None:
            continue
        where = {"file": file, "line": element.sourceline, "element_id": _owner_id(element)}
        written = name.strip()
        if "${" in written or "#{" in written:
            raise ModelError(
                f"camunda:resource '{name}': a resource name cannot be an expression", **where
            )
        if written.startswith(CLASSPATH_SCHEME):
            path = written[len(CLASSPATH_SCHEME) :]
            if path not in resources:
                raise ModelError(
                    f"camunda:resource '{name}': the class path cannot be read by this engine; "
                    f"deploy the file with the process and name it deployment://{path}",
                    **where,
                )
        else:
            path = written.removeprefix(DEPLOYMENT_SCHEME)
        if path not in resources:
            raise ModelError(
                f"camunda:resource '{name}' names no file of this deployment; deploy '{path}' "
                "together with the process",
                **where,
            )
        try:
            text = resources[path].decode("utf-8")
        except UnicodeDecodeError:
            raise ModelError(f"camunda:resource '{name}' is not UTF-8 text", **where) from None
        try:
            element.set(EMBEDDED_SCRIPT, text)
        except ValueError as error:  # text XML cannot carry (control characters)
            raise ModelError(f"camunda:resource '{name}': {error}", **where) from None
        changed = True
    if not changed:
        return content
    body: bytes = etree.tostring(root, encoding="UTF-8", xml_declaration=True)
    return body
