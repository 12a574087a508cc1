"""Settings of the web process, from arguments or the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    home: Path | None = None
    demo: bool = False

    @classmethod
    def from_env(cls, *, demo: bool | None = None) -> Settings:
        home = os.environ.get("INTERLOCK_HOME")
        return cls(
            database_url=os.environ.get("DATABASE_URL") or None,
            home=Path(home) if home else None,
            demo=demo if demo is not None else os.environ.get("INTERLOCK_DEMO", "") == "1",
        )
