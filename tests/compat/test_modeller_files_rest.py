"""Files as other modellers export them deploy over REST as Camunda deploys them: processes
marked non-executable and pools without flow nodes are skipped (a definition for each of the
rest), vendor extension elements and attributes are ignored, and a file without the
targetNamespace BPMN's schema requires is refused naming it."""

from __future__ import annotations

import httpx

from tests.compat.conftest import deploy, start

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"

# In the style of a Signavio export: a collaboration of an executable pool and a black-box pool,
# the vendor's metadata as extension elements, its namespace on the root.
SIGNAVIO = f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="{BPMN}" xmlns:signavio="http://www.signavio.com"
  xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
  xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
  exporter="Signavio Process Editor" exporterVersion="18.1.0"
  id="sid-defs" targetNamespace="http://www.signavio.com">
  <collaboration id="sid-collab">
    <participant id="sid-shop" name="Shop" processRef="signavio-order" />
    <participant id="sid-customer" name="Customer" processRef="sid-customer-process" />
  </collaboration>
  <process id="signavio-order" name="Order" isExecutable="true" isClosed="false">
    <extensionElements>
      <signavio:signavioDiagramMetaData metaKey="revisionid" metaValue="abc" />
    </extensionElements>
    <startEvent id="sid-start" name="Order in">
      <extensionElements>
        <signavio:signavioMetaData metaKey="bgcolor" metaValue="#ffffff" />
      </extensionElements>
    </startEvent>
    <userTask id="sid-check" name="Check order" signavio:customAttr="x" />
    <endEvent id="sid-end" />
    <sequenceFlow id="sid-f1" sourceRef="sid-start" targetRef="sid-check" />
    <sequenceFlow id="sid-f2" sourceRef="sid-check" targetRef="sid-end" />
  </process>
  <process id="sid-customer-process" isExecutable="false">
    <laneSet id="sid-lanes" />
  </process>
</definitions>
"""

# In the style of a Yaoqiang or Bizagi export: the `semantic:` prefix, vendor attributes and
# style elements, a documentation-only process marked non-executable.
PREFIXED = f"""<?xml version="1.0" encoding="UTF-8"?>
<semantic:definitions xmlns:semantic="{BPMN}" xmlns:yaoqiang="http://bpmn.sourceforge.net"
  xmlns:bizagi="http://www.bizagi.com/bpmn20" id="_1" targetNamespace="http://example.com/y"
  exporter="Yaoqiang BPMN Editor" exporterVersion="5.3">
  <semantic:process id="prefixed-flow" isExecutable="true" processType="None">
    <semantic:extensionElements>
      <yaoqiang:description>drawn elsewhere</yaoqiang:description>
      <bizagi:BizagiExtensions><bizagi:BizagiProperties /></bizagi:BizagiExtensions>
    </semantic:extensionElements>
    <semantic:startEvent id="s" yaoqiang:label="go" />
    <semantic:task id="t" name="Plain task" bizagi:color="red" />
    <semantic:endEvent id="e" />
    <semantic:sequenceFlow id="f1" sourceRef="s" targetRef="t" />
    <semantic:sequenceFlow id="f2" sourceRef="t" targetRef="e" />
  </semantic:process>
  <semantic:process id="prefixed-notes" isExecutable="false">
    <semantic:startEvent id="n1" />
  </semantic:process>
</semantic:definitions>
"""


def test_a_collaboration_deploys_its_executable_pool_only(rest: httpx.Client) -> None:
    deployed = deploy(rest, ("order.bpmn", SIGNAVIO))
    assert sorted(deployed["deployedProcessDefinitions"]) != []
    keys = [d["key"] for d in deployed["deployedProcessDefinitions"].values()]
    assert keys == ["signavio-order"]
    started = start(rest, "signavio-order")
    tasks = rest.get("/task", params={"processInstanceId": started["id"]}).json()
    assert [t["name"] for t in tasks] == ["Check order"]
    listed = rest.get("/process-definition", params={"key": "sid-customer-process"}).json()
    assert listed == []


def test_vendor_prefixes_and_extensions_are_ignored(rest: httpx.Client) -> None:
    deployed = deploy(rest, ("prefixed.bpmn", PREFIXED))
    keys = [d["key"] for d in deployed["deployedProcessDefinitions"].values()]
    assert keys == ["prefixed-flow"]
    started = start(rest, "prefixed-flow")
    history = rest.get(f"/history/process-instance/{started['id']}").json()
    assert history["state"] == "COMPLETED"


def test_a_file_of_non_executable_processes_deploys_no_definition(rest: httpx.Client) -> None:
    only_notes = PREFIXED.replace(
        'id="prefixed-flow" isExecutable="true"', 'id="prefixed-flow" isExecutable="false"'
    )
    deployed = deploy(rest, ("notes.bpmn", only_notes))
    assert deployed["id"]
    assert not deployed["deployedProcessDefinitions"]
    files = rest.get(f"/deployment/{deployed['id']}/resources").json()
    assert [f["name"] for f in files] == ["notes.bpmn"]


def test_a_file_without_target_namespace_is_refused_naming_it(rest: httpx.Client) -> None:
    bare = SIGNAVIO.replace(' targetNamespace="http://www.signavio.com"', "")
    files = {"data": ("bare.bpmn", bare.encode(), "application/octet-stream")}
    answer = rest.post("/deployment/create", data={"deployment-name": "bare"}, files=files)
    assert answer.status_code == 400
    assert "targetNamespace" in answer.json()["message"]
    assert "bare.bpmn" in answer.json()["message"]
    assert rest.get("/deployment", params={"name": "bare"}).json() == []
