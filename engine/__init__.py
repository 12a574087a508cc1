"""Interlock: a BPMN 2.0 engine whose only state is committed PostgreSQL rows."""
