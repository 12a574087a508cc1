"""All SQL of the engine. Each module owns the statements of one concern."""
