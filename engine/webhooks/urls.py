"""What a webhook URL may point at, and how it is shown to those who may not read it whole.

Destinations. A delivery goes only to public addresses: every address the host resolves to is
checked, and one that is loopback, private, link-local, shared, unspecified, multicast or
reserved refuses the delivery, unless it lies in a network of `allowed_networks`
(INTERLOCK_WEBHOOK_ALLOWED_NETWORKS). An IPv6 address that carries an IPv4 one (mapped
`::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by the
IPv4 address too. Cloud metadata services (by name and by address) are refused whatever the
setting says: no webhook has business there. Every spelling of an address (`2130706433`,
`0x7f000001`, `017700000001`, `127.1`, `[::ffff:127.0.0.1]`) is judged by what the resolver makes
of it, the same resolver the connection then uses: `resolve` gives the checked addresses and the
sender connects to exactly those (engine/webhooks/sender.py), so a name cannot resolve to a
public address for the check and to a private one for the connection.

`check_registered` judges a URL when it is registered: a literal address or a metadata name is
refused then (a 400 naming `url`); a name is resolved only when a delivery is made.

Masking. `masked` shows a URL without its secrets: the user and password of its userinfo, every
query value (parameter names stay) and its fragment become `***`. Only admins, who manage
subscriptions, see URLs whole; the audit log keeps only masked ones.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_address
from urllib.parse import urlsplit, urlunsplit

from engine.webhooks.settings import Network

HIDDEN = "***"
SETTING = "INTERLOCK_WEBHOOK_ALLOWED_NETWORKS"

# Names of cloud metadata services (GCP, AWS, Azure, Alibaba, ...), compared without a trailing
# dot and case.
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
    }
)
# Their addresses: AWS/GCP/Azure/OpenStack, the ECS task endpoint, AWS over IPv6, Alibaba.
METADATA_ADDRESSES = frozenset(
    ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
_NAT64 = IPv6Network("64:ff9b::/96")
_COMPATIBLE = IPv6Network("::/96")

Address = IPv4Address | IPv6Address


class Refused(Exception):
    """A destination the policy refuses; the message says which address and why, never the
    URL (whose query may carry secrets)."""


def _embedded(address: Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 one carries, if any."""
    if not isinstance(address, IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: Address) -> str | None:
    """Why an address is not public, or None when it is."""
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


def refusal(address: Address, allowed: Iterable[Network], shown: str | None = None) -> str | None:
    """Why a delivery may not go to `address` (a sentence naming it as `shown`), or None when it
    may. An address carrying an IPv4 one is judged by that one."""
    name = shown or str(address)
    inner = _embedded(address)
    judged = address if inner is None else inner
    carried = "" if inner is None else f" (it carries {inner})"
    if address in METADATA_ADDRESSES or judged in METADATA_ADDRESSES:
        return f"{name} is a cloud metadata address{carried}"
    if any(
        a in network
        for a in (address, judged)
        for network in allowed
        if a.version == network.version
    ):
        return None
    kind = _kind(judged)
    return None if kind is None else f"{name} is {kind}{carried}, not in {SETTING}"


def _metadata_name(host: str) -> bool:
    return host.rstrip(".").lower() in METADATA_NAMES


def _parse(text: str) -> Address:
    return ip_address(text.split("%", 1)[0])


def resolve(
    host: str, port: int, allowed: Iterable[Network]
) -> list[tuple[socket.AddressFamily, str]]:
    """The addresses to connect to for `host` (family, address), in the resolver's order, each
    one checked: Refused if any of them is refused (or the name is a metadata service's);
    OSError (socket.gaierror) if the name does not resolve."""
    if _metadata_name(host):
        raise Refused(f"{host.rstrip('.').lower()} is a cloud metadata name")
    allowed = tuple(allowed)
    found: list[tuple[socket.AddressFamily, str]] = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        text = str(sockaddr[0])
        reason = refusal(_parse(text), allowed)
        if reason is not None:
            raise Refused(reason)
        if (family, text) not in found:
            found.append((family, text))
    return found


def check_registered(host: str, allowed: Iterable[Network]) -> str | None:
    """Why a URL with this host may not be registered, or None. Only what needs no DNS: a
    metadata name, `localhost`, or a literal address in any spelling the resolver reads."""
    if _metadata_name(host):
        return f"{host.rstrip('.').lower()} is a cloud metadata name"
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        addresses: list[Address] = [ip_address("127.0.0.1"), ip_address("::1")]
    else:
        try:
            infos = socket.getaddrinfo(
                host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
            )
        except (OSError, UnicodeError):
            return None  # a name: judged when a delivery resolves it
        addresses = [_parse(str(info[4][0])) for info in infos]
    allowed = tuple(allowed)
    for address in addresses:
        shown = host if str(address) == host else f"{host} ({address})"
        reason = refusal(address, allowed, shown)
        if reason is not None:
            return reason
    return None


def masked(url: str) -> str:
    """`url` with the user and password of its userinfo, every query value and the fragment
    replaced by `***`; scheme, host, port, path and query parameter names stay."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return HIDDEN
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{HIDDEN}:{HIDDEN}@{host}" if ":" in userinfo else f"{HIDDEN}@{host}"
    query = "&".join(
        f"{piece.split('=', 1)[0]}={HIDDEN}" if "=" in piece else HIDDEN if piece else ""
        for piece in parts.query.split("&")
    )
    fragment = HIDDEN if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))
