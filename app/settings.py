"""Settings of the web process, from arguments or the environment."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    home: Path | None = None
    host: str = "127.0.0.1"
    demo: bool = False
    auth: bool = True
    run_jobs: bool = True
    # Signs console sessions; random per process unless set (set it when running several).
    secret: str | None = None

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        home = os.environ.get("INTERLOCK_HOME")
        values: dict[str, object] = {
            "database_url": os.environ.get("DATABASE_URL") or None,
            "home": Path(home) if home else None,
            "demo": os.environ.get("INTERLOCK_DEMO", "") == "1",
            "secret": os.environ.get("INTERLOCK_SECRET") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
