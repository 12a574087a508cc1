"""Typed commands: every mutation of the engine is one of these, run by `engine.core.executor`."""
