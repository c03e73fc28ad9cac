"""Decode speed from bytes per token and tier bandwidths: an upper bound, labelled as one.

Rule 1: tokens/s ≤ 1 / Σ over tiers (bytes read from the tier / its bandwidth). Decoding is
        memory-bound; compute, synchronisation and prompt processing only make it slower, so
        this is an upper bound, never a measurement, and every text says so.
Rule 2: the stream tier reads from the page cache when the machine's available RAM beyond the
        budget holds everything that streams (the unpinned layers whole and a streamed head,
        `streamed_file_bytes`), else from disk. No machine known: disk.
Rule 3: an impossible plan has no speed; a forced plan runs its minimum configuration; an
        unlimited plan reads everything from RAM. A full load has a speed only when the fit
        admits it (fits on GPU, split or CPU only) and its KV is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, for_machine, page_cache_bandwidth
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.speed.token_bytes import MoeFraction, TokenBytes, TokenPrices, fit_token_bytes

ESTIMATE_LABEL = "memory-bandwidth bound, not measured"


class StreamSource(str, Enum):
    NONE = "none"  # nothing streams
    PAGE_CACHE = "page_cache"
    DISK = "disk"


STREAM_WORDS = {StreamSource.NONE: "RAM only", StreamSource.PAGE_CACHE: "from the page cache",
                StreamSource.DISK: "from disk"}


@dataclass(frozen=True)
class SpeedEstimate:
    """Bytes per token per tier, the bandwidths used, and the tokens/s bound they give."""

    bytes: TokenBytes
    ram: Bandwidth
    stream: Bandwidth | None
    stream_from: StreamSource
    vram: Bandwidth | None
    moe: MoeFraction | None

    @property
    def seconds_per_token(self) -> float:
        tiers = ((self.bytes.ram, self.ram), (self.bytes.stream, self.stream), (self.bytes.vram, self.vram))
        return sum(n / bw.bytes_per_s for n, bw in tiers if n and bw is not None)

    @property
    def tok_s(self) -> float:
        seconds = self.seconds_per_token
        return 1 / seconds if seconds > 0 else float("inf")


def stream_source(streamed: int, host_available: int | None, budget: int) -> StreamSource:
    """Rule 2."""
    if streamed == 0:
        return StreamSource.NONE
    if host_available is not None and host_available - budget >= streamed:
        return StreamSource.PAGE_CACHE
    return StreamSource.DISK


def budget_plan_speed(prices: TokenPrices, n_pinned: int, stream_head: bool, kv: int, budget: int,
                      bandwidths: Bandwidths, host_available: int | None) -> SpeedEstimate:
    """Rules 1–2 for one configuration of the budget plan."""
    read = prices.budget_plan(n_pinned, stream_head, kv)
    cached = prices.streamed_file_bytes(n_pinned, stream_head) if read.stream else 0
    source = stream_source(cached, host_available, budget)
    stream = {StreamSource.NONE: None, StreamSource.PAGE_CACHE: page_cache_bandwidth(bandwidths.ram),
              StreamSource.DISK: bandwidths.disk}[source]
    return SpeedEstimate(read, bandwidths.ram, stream, source, None, prices.moe)


def plan_speed(prices: TokenPrices, plan: MemoryPlan, bandwidths: Bandwidths,
               host_available: int | None) -> SpeedEstimate | None:
    """The budget plan's decode bound (Rules 1–3); None when the plan is refused."""
    if plan.impossible:
        return None
    return budget_plan_speed(prices, plan.n_pinned, plan.stream_lm_head, plan.ledger.kv, plan.budget_bytes,
                             bandwidths, host_available)


def fit_speed(prices: TokenPrices, fit: FitEstimate, bandwidths: Bandwidths) -> SpeedEstimate | None:
    """The full load's decode bound (Rules 1, 3) at the figures of the fit's machine (`bandwidth.for_machine`:
    its GPUs' bandwidth, a unified-memory preset's RAM); None when it does not fit or its KV is unknown."""
    if not fit.verdict.admitted:
        return None
    read = fit_token_bytes(prices, fit)
    if read is None:
        return None
    figures = for_machine(bandwidths, fit.snapshot)
    vram = figures.vram if read.vram else None
    return SpeedEstimate(read, figures.ram, None, StreamSource.NONE, vram, prices.moe)
