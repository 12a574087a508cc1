"""The web console and HTTP surface over the engine."""
