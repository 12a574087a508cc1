"""One POST of a webhook delivery, with the guards a URL chosen by an admin needs:

- Destination: the host is resolved and every address checked (engine/webhooks/urls.py) in the
  network backend the HTTP client connects through, and the socket connects to a checked address
  (never to the name again: no second lookup a rebinding DNS server could answer differently).
  TLS still verifies the certificate against the URL's name (SNI), and `Host` is the URL's.
- A deadline for the whole attempt: every connect, TLS handshake, write and read gets at most
  the time left until `timeout_seconds` after the attempt began, so a receiver that answers a
  byte at a time cannot hold a dispatcher thread past it. (Resolving a name is bounded by the
  system resolver's own timeouts.)
- At most MAX_RESPONSE_BYTES of the answer are read; then the connection is closed. The status
  decides the outcome; the body is never kept.
- No redirects (the client never follows one: a 3xx is a failed attempt), no proxies from the
  environment, no connection kept between attempts (each attempt resolves and checks again).

httpcore (the transport under httpx) is used directly because only it lets the connection go
through a backend of our own.
"""

from __future__ import annotations

import base64
import ssl
import time
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

import httpcore
import httpx

from engine.webhooks import urls
from engine.webhooks.settings import Network, WebhookSettings

# The most of an answer's body that is read before the connection is closed.
MAX_RESPONSE_BYTES = 64 * 1024


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation ends by the attempt's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def _left(self, timeout: float | None, error: type[httpcore.TimeoutException]) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise error("the attempt's deadline has passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # One write of a small body; its time is bounded by the deadline as a whole.
        self._inner.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context, server_hostname, self._left(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _GuardedBackend(httpcore.NetworkBackend):
    """Connects only to checked addresses, by the deadline."""

    def __init__(self, allowed: tuple[Network, ...], deadline: float) -> None:
        self._allowed = allowed
        self._deadline = deadline
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            addresses = urls.resolve(host, port, self._allowed)
        except OSError:
            raise httpcore.ConnectError("cannot resolve the host") from None
        failure: Exception = httpcore.ConnectError("the host has no address")
        for _, address in addresses:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ConnectTimeout("the attempt's deadline has passed")
            try:
                # An address literal: SyncBackend resolves nothing more.
                stream = self._sockets.connect_tcp(
                    address, port, left if timeout is None else min(timeout, left)
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks do not connect to unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _request_parts(url: str) -> tuple[httpcore.URL, list[tuple[bytes, bytes]]]:
    """httpcore's URL for `url` and the headers the URL itself implies: `Host`, and Basic
    credentials from its userinfo (as browsers and httpx send them)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").encode("idna")
    port = parts.port
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    shown_host = b"[" + host + b"]" if b":" in host else host
    headers = [(b"Host", shown_host + (b":%d" % port if port is not None else b""))]
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers.append((b"Authorization", b"Basic " + base64.b64encode(pair.encode())))
    address = httpcore.URL(
        scheme=parts.scheme.lower().encode(), host=host, port=port, target=target.encode()
    )
    return address, headers


class Sender:
    """POSTs deliveries under the guards above; one serves any number of threads."""

    def __init__(self, settings: WebhookSettings) -> None:
        self._allowed = settings.allowed_networks
        self._timeout = settings.timeout_seconds
        self._ssl = httpx.create_ssl_context()

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> tuple[bool, str]:
        """(delivered, the status to record): an HTTP status or a short reason; never an
        exception's text, which may quote the URL's query."""
        deadline = time.monotonic() + self._timeout
        try:
            target, implied = _request_parts(url)
        except (ValueError, UnicodeError):
            return False, "invalid URL"
        sent = [*implied, *((k.encode(), v.encode()) for k, v in headers.items())]
        timeouts = {"connect": self._timeout, "read": self._timeout, "write": self._timeout}
        pool = httpcore.ConnectionPool(
            ssl_context=self._ssl,
            max_keepalive_connections=0,
            network_backend=_GuardedBackend(self._allowed, deadline),
        )
        try:
            with pool.stream(
                "POST", target, headers=sent, content=body, extensions={"timeout": timeouts}
            ) as response:
                read = 0
                for chunk in response.iter_stream():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
                status = response.status
        except urls.Refused as refused:
            return False, f"refused: {refused}"
        except httpcore.TimeoutException:
            return False, "timeout"
        except httpcore.ConnectError as exc:
            return False, _connect_failure(str(exc).lower())
        except httpcore.ProtocolError:
            return False, "invalid HTTP answer"
        except (httpcore.NetworkError, httpcore.UnsupportedProtocol, OSError) as exc:
            return False, f"request failed ({type(exc).__name__})"
        finally:
            pool.close()
        if 300 <= status < 400:
            return False, f"HTTP {status} (redirects are not followed)"
        return 200 <= status < 300, f"HTTP {status}"


def _connect_failure(text: str) -> str:
    if "resolve" in text:
        return "cannot resolve the host"
    if "refused" in text:
        return "connection refused"
    if "certificate" in text:
        return "TLS certificate not valid"
    return "cannot connect"
