"""The one HTTP client policy: every remote read (a file's header, the Hub's listing) goes through it.

Rule 1: deadlines are overall, never per read: inside `deadline(s)` every connect, TLS handshake,
        read and write of the client's connections gets at most what is left of `s` (nested
        deadlines keep the sooner), so a server that drips a byte a second is cut when the
        deadline passes. httpx takes no network backend, so the policy wraps the one its
        connection pool holds (httpcore's public `NetworkBackend` interface).
Rule 2: identity encoding only: the client asks for `Accept-Encoding: identity` and
        `identity_body` refuses an answer with any other `Content-Encoding`; nothing is ever
        decompressed (a 5 KB `gzip, gzip` answer inflated to 3.2 GB before).
Rule 3: at most `FetchLimits.max_redirects` redirects; a loop is one line.
Rule 4: addresses are checked before any request and shown without credentials (`urls.py`).
Rule 5: every failure of the network or the server is one `RemoteError` line (`network_error`):
        a connection that cannot be made says "can't reach HOST — offline?"; no httpx exception
        escapes.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterable, Iterator
import httpcore
import httpx

from gguf_budget.core.errors import RemoteError, Unreachable
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.urls import host_of, redacted
from gguf_budget.core.safe_text import safe_text


IDENTITY = {"Accept-Encoding": "identity"}
_DEADLINE: ContextVar[float] = ContextVar("gguf_budget_http_deadline", default=math.inf)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Rule 1: what runs inside finishes within `seconds`, or within an enclosing deadline if sooner."""
    token = _DEADLINE.set(min(_DEADLINE.get(), time.monotonic() + seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_passed() -> bool:
    return time.monotonic() >= _DEADLINE.get()


def _left(timeout: float | None, timed_out: type[Exception]) -> float | None:
    """The time one socket operation may take: its own timeout, cut to what the deadline leaves."""
    left = _DEADLINE.get() - time.monotonic()
    if left <= 0:
        raise timed_out("the deadline passed")
    if math.isinf(left):
        return timeout
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation ends by the deadline (Rule 1)."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """Opens connections that keep the deadline (Rule 1)."""

    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout),
                                                       local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout),
                                                               socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _keep_deadlines(transport: httpx.BaseTransport | None) -> None:
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        raise RuntimeError("httpx's connection pool changed: the HTTP deadline cannot be enforced")
    if not isinstance(backend, _DeadlineBackend):
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]


def policy_client(limits: FetchLimits) -> httpx.Client:
    """The client every remote read uses (Rules 1–3): deadlines, identity encoding, bounded redirects."""
    client = httpx.Client(timeout=httpx.Timeout(limits.timeout_s), follow_redirects=True,
                          max_redirects=limits.max_redirects, headers=IDENTITY)
    for transport in (client._transport, *client._mounts.values()):  # Rule 1: httpx has no public hook
        if transport is not None:
            _keep_deadlines(transport)
    return client


def identity_body(response: httpx.Response) -> Iterator[bytes]:
    """Rule 2: the body as sent, refused when it is compressed."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise RemoteError(f"{redacted(str(response.url))}: the server compressed its answer "
                          f"({safe_text(encoding, 40)}) although only identity was accepted")
    return response.iter_raw()


def too_late(where: str, limits: FetchLimits, asked: int, started: float) -> Unreachable:
    """Rule 5 for a request that timed out: its own deadline passed, or the server fell silent for `timeout_s`
    first (said so: "no complete answer within 84 s" was said after 21 s of silence)."""
    if time.monotonic() - started >= limits.request_deadline(asked):
        return Unreachable(f"{where}: no complete answer within {limits.request_deadline(asked):.3g} s")
    return Unreachable(f"{where}: the server sent nothing for {limits.timeout_s:.3g} s")


def network_error(error: httpx.HTTPError | httpx.InvalidURL, url: str, limits: FetchLimits, hub: bool = False) -> RemoteError:
    """Rule 5: one line for whatever httpx raised while reading `url`."""
    where = safe_text(redacted(url), 200)
    if isinstance(error, httpx.TooManyRedirects):
        return RemoteError(f"{where}: more than {limits.max_redirects} redirects (a redirect loop?)")
    if isinstance(error, httpx.TimeoutException):
        return Unreachable(f"{where}: no complete answer in time")
    if isinstance(error, httpx.ConnectError):
        name = "Hugging Face" if hub else safe_text(host_of(url), 80)
        return Unreachable(f"can't reach {name} — offline? ({where})")
    if isinstance(error, httpx.DecodingError):
        return RemoteError(f"{where}: the server's answer could not be read as sent")
    if isinstance(error, httpx.TransportError):
        return Unreachable(f"{where}: the connection failed or dropped ({type(error).__name__})")
    if isinstance(error, httpx.InvalidURL):
        return RemoteError(f"{where}: the server redirected to an address that is not a URL")
    return RemoteError(f"{where}: {type(error).__name__}")
