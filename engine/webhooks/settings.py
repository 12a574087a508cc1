"""How webhooks are delivered: attempts, backoff, timeouts, leases, the networks deliveries may
reach besides public addresses. Each is a setting with an environment variable
(`INTERLOCK_WEBHOOK_...`); docs/operator-guide.md lists them."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from ipaddress import IPv4Network, IPv6Network, ip_network

Network = IPv4Network | IPv6Network


def parse_networks(
    text: str, source: str = "INTERLOCK_WEBHOOK_ALLOWED_NETWORKS"
) -> tuple[Network, ...]:
    """Comma-separated networks (`10.0.0.0/8, 127.0.0.1, ::1/128`); host bits are dropped."""
    found: list[Network] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            found.append(ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{source} lists {part!r}, which is not an IP network") from None
    return tuple(found)


@dataclass(frozen=True)
class WebhookSettings:
    # Attempts of one delivery before it is parked as a dead letter.
    max_attempts: int = 10
    # The wait before attempt n+1 is backoff_base * 2^(n-1), at most backoff_cap, of which a
    # random part (up to half) is left out so that retries of many deliveries spread.
    backoff_base_seconds: float = 1.0
    backoff_cap_seconds: float = 300.0
    # One POST may take this long in all (resolving, connecting, sending, reading the answer):
    # a deadline for the whole attempt, not a limit per read.
    timeout_seconds: float = 5.0
    # A leased delivery belongs to its dispatcher this long; then another may take it over.
    lease_seconds: float = 60.0
    # Deliveries leased at a time by one dispatcher thread.
    batch_size: int = 20
    # The longest a dispatcher sleeps between looks (retries falling due, missed notifications).
    poll_seconds: float = 1.0
    # Dispatcher threads per process (each one fans out, leases and posts).
    threads: int = 2
    # Delivered deliveries are deleted this long after delivery (dead letters stay until they
    # are replayed and delivered, or their subscription is deleted).
    keep_delivered_hours: float = 168.0
    # Networks deliveries may reach although they are not public (loopback, private, link-local,
    # shared, reserved addresses). Empty: public addresses only. Cloud metadata services stay
    # refused whatever this says (engine/webhooks/urls.py).
    allowed_networks: tuple[Network, ...] = ()

    def __post_init__(self) -> None:
        for field in fields(self):
            if field.name != "allowed_networks" and getattr(self, field.name) <= 0:
                raise ValueError(f"the webhook setting {field.name} must be positive")
        if self.timeout_seconds >= self.lease_seconds:
            raise ValueError("the webhook timeout must be shorter than the lease")

    @classmethod
    def from_env(cls, **overrides: object) -> WebhookSettings:
        values: dict[str, object] = {}
        for field in fields(cls):
            variable = f"INTERLOCK_WEBHOOK_{field.name.upper()}"
            text = os.environ.get(variable)
            if not text:
                continue
            if field.name == "allowed_networks":
                values[field.name] = parse_networks(text, variable)
                continue
            kind = int if field.type in (int, "int") else float
            try:
                values[field.name] = kind(text)
            except ValueError:
                raise ValueError(f"{variable} must be a number, not {text!r}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
