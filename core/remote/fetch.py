"""Read the first bytes of a remote file with HTTP range requests, in growing chunks, until enough.

Rule 1: ask for 1 MiB, then double the prefix (asking only for the bytes not yet held) until the
        caller says the header is whole, the file ends, or the cap (default 64 MiB) is reached —
        so the bytes moved stay within twice the header, never the model.
Rule 2: a server that ignores Range answers 200 with the whole file: that is detected, the body
        is read as a stream and the transfer is cut at the cap (or as soon as the header is whole);
        a 200 is never downloaded whole.
Rule 3: a timeout, a dropped connection, 429 or a 5xx is retried with back-off (twice by
        default); then it is one line (`RemoteError`). 401/403/404 are not retried. Redirects (a
        CDN) are followed.
Rule 4: `cancelled()` is asked between chunks and while streaming; yes raises `FetchCancelled`.
The one impure HTTP module of the core (httpx); what to fetch is decided in `refs.py`/`hub.py`.
"""

from __future__ import annotations

import re
import time
from functools import partial
from dataclasses import dataclass
from typing import Callable, Mapping

import httpx

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.units import human_bytes

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class FetchCancelled(RemoteError):
    """The user cancelled the transfer; nothing is wrong with the source."""


@dataclass(frozen=True)
class Prefix:
    """The first bytes of a file, what the server said about the whole, and what crossed the wire."""

    data: bytes
    total_bytes: int | None
    etag: str | None
    commit: str | None
    transferred: int
    ranged: bool

    @property
    def whole_file(self) -> bool:
        return self.total_bytes is not None and len(self.data) >= self.total_bytes


Enough = Callable[[bytes, "int | None"], bool]
Progress = Callable[[int, "int | None"], None]


def _never() -> bool:
    return False


def _quiet(done: int, total: int | None) -> None:
    return None


class _Retry(Exception):
    """A failure Rule 3 retries: timeout, dropped connection, 429, 5xx."""


@dataclass(frozen=True)
class _Answer:
    """One response: the bytes read, and what its headers said."""

    body: bytes
    status: int
    total: int | None
    etag: str | None
    commit: str | None


class PrefixReader:
    """Fetches growing prefixes of one URL (Rules 1–4)."""

    def __init__(self, client: httpx.Client, url: str, headers: Mapping[str, str] | None = None,
                 limits: FetchLimits = FetchLimits(), progress: Progress = _quiet,
                 cancelled: Callable[[], bool] = _never):
        self.client, self.url, self.headers, self.limits = client, url, dict(headers or {}), limits
        self.progress, self.cancelled = progress, cancelled
        self.transferred = 0

    def read_until(self, enough: Enough) -> Prefix:
        data = b""
        want = self.limits.first_chunk
        while True:
            answer = self._retrying(partial(self._get, len(data), want, enough))
            if answer.status == 200:
                return Prefix(answer.body, answer.total, answer.etag, answer.commit, self.transferred, False)
            data += answer.body
            total = len(data) if answer.status == 416 else answer.total
            done = total is not None and len(data) >= total
            if done or enough(data, total):
                return Prefix(data, total, answer.etag, answer.commit, self.transferred, True)
            if len(data) >= self.limits.cap:
                raise RemoteError(f"the header is larger than the {human_bytes(self.limits.cap)} cap "
                                  "(raise it with --max-header)")
            want = min(2 * want, self.limits.cap, total if total is not None else self.limits.cap)

    def _retrying(self, attempt: Callable[..., _Answer]) -> _Answer:
        for n in range(self.limits.retries + 1):
            self._check_cancel()
            try:
                return attempt()
            except _Retry as e:
                failure = str(e)
            if n < self.limits.retries:
                time.sleep(self.limits.backoff_s * (2 ** n))
        raise RemoteError(f"{self.url}: {failure} ({self.limits.retries + 1} tries)")

    def _get(self, start: int, end: int, enough: Enough) -> _Answer:
        headers = {**self.headers, "Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity"}
        try:
            with self.client.stream("GET", self.url, headers=headers) as response:
                status = response.status_code
                if status in _RETRY_STATUS:
                    raise _Retry(f"the server answered {status}")
                _raise_for_status(status, self.url)
                etag = response.headers.get("x-linked-etag") or response.headers.get("etag")
                commit = response.headers.get("x-repo-commit")
                if status == 416:
                    return _Answer(b"", 416, start, etag, commit)
                if status == 200:
                    body, total = self._stream_unranged(response, enough)
                    return _Answer(body, 200, total, etag, commit)
                total = self._content_range(response, start)
                return _Answer(self._read_body(response), 206, total, etag, commit)
        except httpx.TimeoutException:
            raise _Retry(f"timed out after {self.limits.timeout_s:g} s") from None
        except httpx.TransportError as e:
            raise _Retry(f"the connection failed or dropped ({type(e).__name__})") from None

    def _content_range(self, response: httpx.Response, start: int) -> int | None:
        match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", ""))
        if match is None or int(match[1]) != start:
            raise RemoteError(f"{self.url}: the server sent a range other than the one asked for")
        return None if match[3] == "*" else int(match[3])

    def _stream_unranged(self, response: httpx.Response, enough: Enough) -> tuple[bytes, int | None]:
        """Rule 2: the whole file is coming; read until the header is whole or the cap, then hang up."""
        length = response.headers.get("content-length")
        total = int(length) if length and length.isdigit() else None
        data = bytearray()
        check_at = self.limits.first_chunk
        for piece in response.iter_bytes():
            self._take(data, piece, total)
            if len(data) >= check_at:
                if enough(bytes(data), total):
                    return bytes(data), total
                check_at = 2 * len(data)
            if len(data) >= self.limits.cap:
                raise RemoteError(f"{self.url}: the server ignores range requests and the header did not end within "
                                  f"{human_bytes(self.limits.cap)}; stopped there rather than download the whole file")
        return bytes(data), len(data)

    def _read_body(self, response: httpx.Response) -> bytes:
        data = bytearray()
        for piece in response.iter_bytes():
            self._take(data, piece, None)
            if len(data) > self.limits.cap:
                raise RemoteError(f"{self.url}: the server sent more than the {human_bytes(self.limits.cap)} cap "
                                  "for one range")
        return bytes(data)

    def _take(self, data: bytearray, piece: bytes, total: int | None) -> None:
        self._check_cancel()
        data += piece
        self.transferred += len(piece)
        self.progress(self.transferred, total)

    def _check_cancel(self) -> None:
        if self.cancelled():
            raise FetchCancelled("cancelled")


def _raise_for_status(status: int, url: str) -> None:
    if status in (200, 206, 416):
        return
    if status in (401, 403):
        raise RemoteError(f"{url}: access denied ({status}); for a gated or private Hub model set HF_TOKEN "
                          "or log in with `hf auth login`")
    if status == 404:
        raise RemoteError(f"{url}: not found (404)")
    raise RemoteError(f"{url}: the server answered {status}")


def http_client(limits: FetchLimits) -> httpx.Client:
    """The client every remote read uses: the limits' timeout, redirects followed, no compression."""
    return httpx.Client(timeout=httpx.Timeout(limits.timeout_s), follow_redirects=True)
