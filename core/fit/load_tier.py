"""A full load's one peak figure and its tier: fits, tight or won't — the words every screen and `fit` use.

Rule 1: one peak figure per program and end of the band (`peak_memory`): the short end is the band's
        bottom (`RuntimeMemory.peak_rss_short`); the full end is the band's top, and for llama-server (and
        llama-cli, which runs it in-process) the top with the cache and checkpoints its verdict counts
        (`ServerLoad.counted`: the session's peak, or the worst case with --worst-case) in place of the
        filled slots' checkpoints, whichever is larger — so "peak" and "worst case" are never two figures
        for the same question.
Rule 2: WONT when the verdict is not admitted. TIGHT when it is, but the full-end peak is above the host's
        available RAM (it runs only by paging mapped weights back in), or the host — or a GPU whose layer count
        the person fixed — has under `TIGHT_HEADROOM` (10 %) of its usable memory left after the placement's need.
        With llama.cpp's own layer count a GPU is filled up to its reserve by design (the reserve is its margin),
        so a full GPU alone is not tight. FITS otherwise.
        An unknown verdict has no tier.
Rule 3: each tier carries its reason in plain words; a tight load never reads as "fits".
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.runtime_memory import serves_sessions
from gguf_budget.core.fit.types import FitEstimate, FitVerdict
from gguf_budget.core.units import human_bytes
from gguf_budget.core.vocab import TextEnum

TIGHT_HEADROOM = 0.10
PAGING = "tight: relies on paging mapped weights back in"


class LoadTier(TextEnum):
    """The three tiers of an answer (the value is the JSON word)."""

    FITS = "fits"
    TIGHT = "tight"
    WONT = "won't"


@dataclass(frozen=True)
class Peak:
    """Rule 1: the host's peak resident memory at each end of the band (None: the context is unknown)."""

    short: int | None
    full: int | None
    counted_over_filled: int = 0
    """How far the full end is above the filled context's own resident memory: the server's cache and checkpoints
    its verdict counts beyond the filled slots' checkpoints (0 when none are)."""


@dataclass(frozen=True)
class TierJudgement:
    """A tier and why, in words."""

    tier: LoadTier
    why: str


def peak_memory(fit: FitEstimate) -> Peak:
    """Rule 1."""
    m = fit.memory
    if m is None or m.full is None:
        return Peak(None if m is None else m.peak_rss_short, None)
    full = m.full.total
    server = fit.server
    serves = serves_sessions(fit.request.engine.runtime)
    counted = None if server is None or not server.host_rss or not serves else server.counted
    if counted is not None:
        full = max(full, full - m.full.checkpoints + counted)
    return Peak(m.peak_rss_short, full, full - m.full.total)


def _headroom(fit: FitEstimate) -> str:
    """Rule 2's headroom test: the first device under 10 % left, in words ('' when none)."""
    for d in fit.devices:
        need = d.need
        if need is None or d.usable <= 0 or (d.name != "host" and fit.request.gpu_layers is None):
            continue
        left = d.usable - need
        if left < TIGHT_HEADROOM * d.usable:
            return (f"tight: {human_bytes(max(left, 0))} left of {human_bytes(d.usable)} usable on {d.label} "
                    f"(under {TIGHT_HEADROOM:.0%} headroom)")
    return ""


def load_tier(fit: FitEstimate) -> TierJudgement | None:
    """Rules 2–3."""
    if fit.verdict is FitVerdict.UNKNOWN:
        return None
    if not fit.verdict.admitted:
        short = ", ".join(f"{name} short by {human_bytes(b)}" for name, b in fit.shortfall.items())
        return TierJudgement(LoadTier.WONT, f"won't fit: {short}" if short else "won't fit")
    peak = peak_memory(fit).full
    available = fit.snapshot.host_available
    if peak is not None and peak > available:
        return TierJudgement(LoadTier.TIGHT, f"{PAGING} (peak {human_bytes(peak)} above the "
                                             f"{human_bytes(available)} of RAM available)")
    tight = _headroom(fit)
    return TierJudgement(LoadTier.TIGHT, tight) if tight else TierJudgement(LoadTier.FITS, "fits")
