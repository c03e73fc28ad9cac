"""How much a remote header read may ask for and how long it waits: a plain record, without the HTTP client.

It lives apart from `fetch.py` so that the command line can state and set the limits
(`--max-header`) without importing httpx, which only a remote model needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RemoteError

MIB = 1 << 20


@dataclass(frozen=True)
class FetchLimits:
    """How much to ask for and how long to wait; the cap bounds every transfer."""

    first_chunk: int = MIB
    cap: int = 64 * MIB
    timeout_s: float = 20.0
    retries: int = 2
    backoff_s: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.first_chunk <= self.cap:
            raise RemoteError("the first chunk must be positive and no larger than the cap")
