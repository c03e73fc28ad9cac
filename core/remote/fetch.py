"""Read the first bytes of a remote file with HTTP range requests, in growing chunks, until enough.

Rule 1: ask for 1 MiB, then double the prefix (asking only for the bytes not yet held) until the
        caller says the header is whole, the file ends, or the cap (default 64 MiB) is reached —
        so the bytes moved stay within twice the header, never the model.
Rule 2: a server that ignores Range answers 200 with the whole file: that is detected, the body
        is read as a stream and the transfer is cut at the cap (or as soon as the header is whole);
        a 200 is never downloaded whole.
Rule 3: every range answer makes progress: it starts where asked, holds the bytes its
        Content-Range claims, and brings at least `min_progress` bytes (or what was asked, or the
        rest of the file). A file size (Content-Range total, Content-Length) above `MAX_FILE_BYTES`
        is refused. Anything else is one line, never another request.
Rule 4: bounded in time and count (`http.py` Rule 1): each request has `timeout_s` from connect to
        last byte plus its bytes at `min_rate`, the whole file `file_s` plus the cap at `min_rate`
        (`FetchLimits.request_deadline`, `file_deadline`); at most `max_requests` requests per file.
Rule 5: a dropped connection, 429 or a 5xx is retried with back-off (twice by default) within
        those bounds; a connection that cannot be made (offline), a timeout and 4xx are not.
        Redirects (a CDN) are followed.
Rule 6: `cancelled()` is asked between chunks and while streaming; yes raises `FetchCancelled`.
The transfers of the core's remote reads; what to fetch is decided in `refs.py`/`hub.py`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping

import httpx

from gguf_budget.core.errors import FetchCancelled, RemoteError, Unreachable
from gguf_budget.core.remote.http import deadline, deadline_passed, identity_body, network_error, too_late
from gguf_budget.core.remote.urls import redacted
from gguf_budget.core.remote.limits import DEFAULT_LIMITS, FetchLimits
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes

MAX_FILE_BYTES = 1 << 50
"""A remote file claimed larger than 1 PiB is not a model file (Rule 3)."""
_CONTENT_RANGE = re.compile(r"bytes ([0-9]{1,20})-([0-9]{1,20})/([0-9]{1,20}|\*)")
_DIGITS = re.compile(r"[0-9]{1,20}")
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, kw_only=True)
class Prefix:
    """The first bytes of a file, what the server said about the whole, and what crossed the wire."""

    data: bytes
    total_bytes: int | None
    etag: str | None
    commit: str | None
    last_modified: str | None
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
    """A failure Rule 5 retries: a dropped connection, 429, 5xx."""


@dataclass(frozen=True)
class _Answer:
    """One response: the bytes read, and what its headers said."""

    body: bytes
    status: int
    total: int | None
    etag: str | None
    commit: str | None
    last_modified: str | None


class PrefixReader:
    """Fetches growing prefixes of one URL (Rules 1–6)."""

    def __init__(self, client: httpx.Client, url: str, headers: Mapping[str, str] | None = None,
                 limits: FetchLimits = DEFAULT_LIMITS, progress: Progress = _quiet,
                 cancelled: Callable[[], bool] = _never, hub: bool = False):
        self.client, self.url, self.headers, self.limits = client, url, dict(headers or {}), limits
        self.progress, self.cancelled, self.hub = progress, cancelled, hub
        self.where = safe_text(redacted(url), 200)
        self.transferred = 0
        self.requests = 0

    def read_until(self, enough: Enough) -> Prefix:
        """Rules 1–4: the prefix that `enough` accepts, within the file's deadline."""
        with deadline(self.limits.file_deadline):
            return self._read_until(enough)

    def _late(self, asked: int, started: float) -> Unreachable:
        """Rule 4: which deadline passed — the file's, this request's, or the server fell silent."""
        if deadline_passed():
            return Unreachable(f"{self.where}: the header did not arrive within {self.limits.file_deadline:.3g} s")
        return too_late(self.where, self.limits, asked, started)

    def _read_until(self, enough: Enough) -> Prefix:
        data = b""
        want = self.limits.first_chunk
        while True:
            answer = self._retrying(partial(self._get, len(data), want, enough))
            if answer.status == 200:
                return Prefix(data=answer.body, total_bytes=answer.total, etag=answer.etag, commit=answer.commit,
                              last_modified=answer.last_modified, transferred=self.transferred, ranged=False)
            data += answer.body
            total = len(data) if answer.status == 416 else answer.total
            done = total is not None and len(data) >= total
            if done or enough(data, total):
                return Prefix(data=data, total_bytes=total, etag=answer.etag, commit=answer.commit,
                              last_modified=answer.last_modified, transferred=self.transferred, ranged=True)
            if len(data) >= self.limits.cap:
                raise RemoteError(f"the header is larger than the {human_bytes(self.limits.cap)} cap "
                                  "(raise it with --max-header)")
            want = min(2 * want, self.limits.cap, total if total is not None else self.limits.cap)

    def _retrying(self, attempt: Callable[[], _Answer]) -> _Answer:
        for n in range(self.limits.retries + 1):
            self._check_cancel()
            if self.requests >= self.limits.max_requests:
                raise RemoteError(f"{self.where}: {self.requests} requests did not bring the header; stopped there")
            self.requests += 1
            try:
                return attempt()
            except _Retry as e:
                failure = str(e)
            if n < self.limits.retries:
                time.sleep(self.limits.backoff_s * (2 ** n))
        raise Unreachable(f"{self.where}: {failure} ({self.limits.retries + 1} tries)")

    def _get(self, start: int, end: int, enough: Enough) -> _Answer:
        headers = {**self.headers, "Range": f"bytes={start}-{end - 1}"}
        started = time.monotonic()
        try:
            with deadline(self.limits.request_deadline(end - start)), \
                    self.client.stream("GET", self.url, headers=headers) as response:
                status = response.status_code
                if status in _RETRY_STATUS:
                    raise _Retry(f"the server answered {status}")
                _raise_for_status(status, self.where)
                etag = response.headers.get("x-linked-etag") or response.headers.get("etag")
                commit = response.headers.get("x-repo-commit")
                modified = response.headers.get("last-modified")
                if status == 416:
                    return _Answer(b"", 416, start, etag, commit, modified)
                if status == 200:
                    body, total = self._stream_unranged(response, enough)
                    return _Answer(body, 200, total, etag, commit, modified)
                first, last, total = self._content_range(response, start)
                body = self._read_body(response, last - first + 1)
                self._check_progress(body, end - start, first, last, total)
                return _Answer(body, 206, total, etag, commit, modified)
        except httpx.TimeoutException:
            raise self._late(end - start, started) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            if deadline_passed():
                raise self._late(end - start, started) from None
            raise _Retry(f"the connection failed or dropped ({type(e).__name__})") from None
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            raise network_error(e, self.url, self.limits, self.hub) from None

    def _content_range(self, response: httpx.Response, start: int) -> tuple[int, int, int | None]:
        """Rule 3: the range the answer claims, which must start where asked and fit the file."""
        match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", "").strip())
        if match is None:
            raise RemoteError(f"{self.where}: the server answered a range request without a valid Content-Range")
        first, last = int(match[1]), int(match[2])
        total = None if match[3] == "*" else int(match[3])
        if first != start or last < first:
            raise RemoteError(f"{self.where}: the server sent a range other than the one asked for")
        if total is not None and total > MAX_FILE_BYTES:
            raise RemoteError(f"{self.where}: the server claims a file of {total:,} bytes, more than any file can be")
        if total is not None and last >= total:
            raise RemoteError(f"{self.where}: the server sent bytes up to {last:,} of a file it says has {total:,}")
        return first, last, total

    def _check_progress(self, body: bytes, asked: int, first: int, last: int, total: int | None) -> None:
        """Rule 3: the bytes the range claims, and enough of them to be worth another request."""
        if len(body) != last - first + 1:
            raise RemoteError(f"{self.where}: the server sent {len(body):,} bytes for a range of {last - first + 1:,}")
        rest = asked if total is None else min(asked, total - first)
        if len(body) < min(rest, self.limits.min_progress):
            raise RemoteError(f"{self.where}: the server answered a range request with {len(body):,} of the "
                              f"{asked:,} bytes asked for; stopped rather than ask again and again")

    def _stream_unranged(self, response: httpx.Response, enough: Enough) -> tuple[bytes, int | None]:
        """Rule 2: the whole file is coming; read until the header is whole or the cap, then hang up."""
        length = response.headers.get("content-length", "").strip()
        total = int(length) if _DIGITS.fullmatch(length) else None
        if total is not None and total > MAX_FILE_BYTES:
            raise RemoteError(f"{self.where}: the server claims a file of {total:,} bytes, more than any file can be")
        data = bytearray()
        check_at = self.limits.first_chunk
        for piece in identity_body(response):
            self._take(data, piece, total)
            if len(data) >= check_at:
                if enough(bytes(data), total):
                    return bytes(data), total
                check_at = 2 * len(data)
            if len(data) >= self.limits.cap:
                raise RemoteError(f"{self.where}: the server ignores range requests and the header did not end "
                                  f"within {human_bytes(self.limits.cap)}; stopped there rather than download the "
                                  "whole file")
        return bytes(data), len(data)

    def _read_body(self, response: httpx.Response, claimed: int) -> bytes:
        data = bytearray()
        for piece in identity_body(response):
            self._take(data, piece, None)
            if len(data) > min(claimed, self.limits.cap):
                raise RemoteError(f"{self.where}: the server sent more than the {min(claimed, self.limits.cap):,} "
                                  "bytes of the range")
        return bytes(data)

    def _take(self, data: bytearray, piece: bytes, total: int | None) -> None:
        self._check_cancel()
        data += piece
        self.transferred += len(piece)
        self.progress(self.transferred, total)

    def _check_cancel(self) -> None:
        if self.cancelled():
            raise FetchCancelled("cancelled")


def _raise_for_status(status: int, where: str) -> None:
    if status in (200, 206, 416):
        return
    if status in (401, 403):
        raise RemoteError(f"{where}: access denied ({status}); for a gated or private Hub model set HF_TOKEN "
                          "or log in with `hf auth login`")
    if status == 404:
        raise RemoteError(f"{where}: not found (404)")
    raise RemoteError(f"{where}: the server answered {status}")
