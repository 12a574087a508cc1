"""BPMN 2.0 XML in and out of the process model."""

from __future__ import annotations

from engine.bpmn.parser import MAX_BPMN_BYTES, parse_bpmn
from engine.bpmn.writer import write_bpmn

__all__ = ["MAX_BPMN_BYTES", "parse_bpmn", "write_bpmn"]
