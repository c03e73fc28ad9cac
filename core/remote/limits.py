"""The numbers of the HTTP client policy (`http.py`): how much, how long, how many — one record.

Tests inject small deadlines through it; the CLI sets the header cap (`--max-header`). It lives
apart from the client so that the command line can state and set the limits without importing
httpx, which only a remote model needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RemoteError

KIB = 1 << 10
MIB = 1 << 20


@dataclass(frozen=True, kw_only=True)
class FetchLimits:
    """How much to ask for and how long to wait; every field bounds some transfer.

    `timeout_s` is one request's deadline from connecting to its last byte, plus the time the
    bytes it asks for take at `min_rate` (so a slow link still brings an 8 MiB chunk, and a
    drip is still cut); `file_s` is one file's, all its requests and retries together, plus the
    cap's bytes at `min_rate` (and the Hub listing's). `min_progress` is the least a range
    answer must bring (unless the file ends first); `max_requests` caps the requests for one
    file.
    """

    first_chunk: int = MIB
    cap: int = 64 * MIB
    timeout_s: float = 20.0
    file_s: float = 120.0
    retries: int = 2
    backoff_s: float = 0.5
    max_requests: int = 64
    min_rate: float = 256 * KIB
    min_progress: int = 64 * KIB
    max_redirects: int = 10
    listing_cap: int = 16 * MIB
    listing_pages: int = 64

    def __post_init__(self) -> None:
        if not 0 < self.first_chunk <= self.cap:
            raise RemoteError("the first chunk must be positive and no larger than the cap")
        if not (self.timeout_s > 0 and self.file_s > 0 and self.max_requests > 0 and self.min_progress > 0
                and self.min_rate > 0):
            raise RemoteError("deadlines, rates, the request cap and the least progress must be positive")

    def request_deadline(self, asked: int) -> float:
        """Seconds one request asking for `asked` bytes may take, first byte to last."""
        return self.timeout_s + asked / self.min_rate

    @property
    def file_deadline(self) -> float:
        """Seconds one file (or one listing) may take, all its requests together."""
        return self.file_s + self.cap / self.min_rate


DEFAULT_LIMITS = FetchLimits()
