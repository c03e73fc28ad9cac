"""The largest context a full load still fits at: with its GPU layers held, or placed again at each ctx.

Rule 1: candidates are the cap itself and the multiples of ENGINE_CELL_PAD (256) below it —
        llama.cpp pads every context to 256 cells (`kv` Rule 5), so a ctx between two
        multiples costs the next one up; its `--fit` likewise lowers n_ctx in whole steps.
Rule 2: only ctx (and, when asked, the placement) moves; the machine, KV type and reserves are
        the request's. `gpu_layers` a number: those layers are held at every candidate — "how
        far can ctx go with this placement" (the fit view, the library). `gpu_layers` None:
        each candidate is placed automatically, as llama.cpp's `-ngl` auto does at that ctx —
        "how far can ctx go on this machine at all" (the quant ladder). A candidate fits when
        the verdict admits it.
Rule 3: every device's KV grows with ctx under either placement, so "fits" holds up to some ctx
        and no further: the answer is the candidate that fits while the next one up does not (or the
        cap, or None). It is aimed, not bisected: with the placement held a load's headroom (`devices`
        Rule 7) falls almost linearly with ctx (KV and compute buffer both grow with it), so the cap is
        judged first, then the first candidate, then the candidate where the headroom of the closest
        fitting and short ones judged so far, drawn as a line, reaches zero (false position). Each
        verdict decides its side exactly, so the answer is the bisection's; about 4 verdicts instead of
        log2(cap / 256) ≈ 9. From the fourth aimed guess on, every other one bisects instead, so a
        headroom far from a line costs at most about twice the bisection. The search is a value (`Aim`)
        that takes one verdict a step, so it can be resumed between any two verdicts. A caller that judged a load
        with this placement fitting at some ctx (`near`: the window's own full load) has the search start
        from the candidate at or below it instead of the first: its scheduler replay is already kept. Where
        `near` is itself a candidate and the caller gives that load's headroom (`near_spare`), that candidate's
        verdict is the load's own (it fits, with that headroom: the same judgement), not asked again — one
        verdict of the four or five a new full load's search asks.
Rule 4: None when even the first candidate (256 tokens, or the cap when smaller) does not fit,
        or the verdict cannot be told (unknown facts).
Rule 5: the answer does not depend on the request's own ctx, so it is kept by the rest of its inputs
        (the last KEPT searches): moving an asked ctx back and forth over the same GPU layers in the
        window, or judging one model's ladder again, searches once. `near` changes the work, never the
        answer, so it is no part of the key (`_Near` equals every other).
Rule 6: a caller that knows how fast `near`'s headroom falls (`rate`: bytes a number of tokens, the KV cache of its
        tightest device, a GPU, over its cells) knows more. Every candidate at or below `near` fits (fitting holds up
        to some ctx, Rule 3), so the search starts with the one just below it taken as fitting, not judged; and it
        judges first the candidate at or below where the line from `near`'s headroom, falling at that rate, reaches
        zero; after one that fits, the first candidate past the zero of the line from it (at most `GUESSES` aims, then
        the cap as before). A candidate aimed that does not fit stands for the cap (every one above it is short too).
        `rate` only aims, like `near` (Rule 5): each verdict still decides its side, so the answer is the bisection's.
        Where the host is the tightest device no rate is given and the search is Rule 3's: what llama-server holds in
        host RAM follows what the host has left (its prompt cache), so there a load's fitting can come and go with ctx
        (a hybrid model on a 16 GiB host: fits at 592k-596k tokens, not at 598k-639k, again at 641k-645k) and only
        Rule 3's own order of verdicts gives its answer. A 70B window's new full loads on one 24 GiB GPU (49 new ctxs):
        3-5 verdicts a search (the cap, the candidate below an asked ctx off the candidates, two or three aimed) become
        2-3, 49 in all for 23 searches instead of 89.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.fit.estimate import fit_headroom
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import ENGINE_CELL_PAD
from gguf_budget.core.model.spec import ModelSpec

KEPT = 256
GUESSES = 2
"""Rule 6: aims at the falling headroom's zero before the cap is judged."""


def _candidate(i: int, n: int, cap: int) -> int:
    return cap if i == n - 1 else ENGINE_CELL_PAD * (i + 1)


def largest_fitting_ctx(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest,
                        gpu_layers: int | None, cap: int, near: int | None = None,
                        near_spare: int | None = None, rate: tuple[int, int] | None = None) -> int | None:
    """Rules 1–6: the largest candidate ctx ≤ cap at which the model fits this machine with `gpu_layers`
    layers held (None: placed automatically at each candidate); `near` a ctx judged fitting so (Rule 3), with
    `near_spare` that load's headroom where known, and `rate` how fast it falls (Rule 6)."""
    return _searched(model, snapshot, replace(request, gpu_layers=gpu_layers, ctx=None), cap,
                     _Near(near, near_spare, rate))


class _Near:
    """Rules 5–6: where the search starts (and the verdict known there) and how it aims, equal to every other, so the
    kept answers ignore it."""

    __slots__ = ("ctx", "spare", "rate")

    def __init__(self, ctx: int | None, spare: int | None, rate: tuple[int, int] | None = None) -> None:
        self.ctx = ctx
        self.spare = spare
        self.rate = rate

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Near)


@per_model(maxsize=KEPT)
def _searched(model: ModelSpec, snapshot: HardwareSnapshot, held: FitRequest, cap: int, near: _Near) -> int | None:
    n = max(-(-cap // ENGINE_CELL_PAD), 1)

    def judged(i: int) -> tuple[bool, int | None]:
        ctx = _candidate(i, n, cap)
        if ctx == near.ctx and near.spare is not None:
            return True, near.spare
        verdict, spare = fit_headroom(model, snapshot, replace(held, ctx=ctx))
        return verdict.admitted, spare

    start = 0 if near.ctx is None else max(min(near.ctx // ENGINE_CELL_PAD - 1, n - 2), 0)
    known = None if near.ctx is None or near.spare is None else (near.ctx, near.spare)
    last = last_fitting(n, lambda i: _candidate(i, n, cap), judged, start, known, near.rate)
    return None if last < 0 else _candidate(last, n, cap)


def last_fitting(n: int, ctx_of: Callable[[int], int], judged: Callable[[int], tuple[bool, int | None]],
                 start: int = 0, near: tuple[int, int] | None = None, rate: tuple[int, int] | None = None) -> int:
    """Rules 3 and 6: the last of n candidates (ctx_of(i) increasing) that fits, −1 when none does; `judged(i)` is
    whether candidate i fits and its headroom; `start` the first candidate judged after the last. `near`: a ctx known
    to fit and its headroom, and `rate` (bytes, tokens) how fast the headroom falls with ctx: with both, the start fits
    unjudged when it is at or below `near`. Fitting must hold up to some candidate and no further."""
    if near is None or rate is None:
        aim = Aim(n=n, start=start)
    elif ctx_of(start) <= near[0] and near[1] >= 0:
        aim = Aim(n=n, start=start, lo=start, lo_spare=near[1], lo_at=near[0], rate=rate, origin=near)
    else:
        aim = Aim(n=n, start=start, rate=rate, origin=near)
    while (i := aim.next(ctx_of)) is not None:
        aim = aim.after(i, *judged(i))
    return aim.lo


@dataclass(frozen=True, kw_only=True)
class Aim:
    """Rule 3's search, one verdict a step: `next` names the candidate to judge (None: `lo` is the answer), `after`
    takes its verdict. Between steps it holds the last candidate known to fit (`lo`, −1: none yet) and the first
    known not to (`hi`, None: none yet), with their headrooms (`lo`'s measured at `lo_at` where that is not its own
    ctx); `rate`, the ctx and headroom it falls from (`origin`) and the aims made at its zero (Rule 6)."""

    n: int
    start: int = 0
    lo: int = -1
    lo_spare: int | None = None
    lo_at: int | None = None
    hi: int | None = None
    hi_spare: int | None = None
    aimed: int = 0
    rate: tuple[int, int] | None = None
    origin: tuple[int, int] | None = None
    guessed: int = 0

    def next(self, ctx_of: Callable[[int], int]) -> int | None:
        lo, hi = self.lo, self.hi
        if hi is None:
            return None if lo == self.n - 1 else self._guess(ctx_of)
        if hi - lo <= 1:
            return None
        if lo < 0:
            return self.start if 0 < self.start < hi else 0
        lo_spare, hi_spare = self.lo_spare, self.hi_spare
        if ((self.aimed < 3 or self.aimed % 2 == 0) and lo_spare is not None and hi_spare is not None
                and lo_spare >= 0 > hi_spare):
            low, high = ctx_of(lo) if self.lo_at is None else self.lo_at, ctx_of(hi)
            zero = low + (high - low) * lo_spare // (lo_spare - hi_spare)
            return min(max(_at_or_below(zero, lo, hi, ctx_of), lo + 1), hi - 1)
        return (lo + hi) // 2

    def _guess(self, ctx_of: Callable[[int], int]) -> int:
        """Rule 6: before any candidate is known short, the last candidate expected to fit: at or below the zero of the
        line falling at `rate` from `origin`; after an aim that fitted, the first past the zero of the line from it
        (`lo`); else the cap."""
        lo, last = self.lo, self.n - 1
        base = (ctx_of(lo), self.lo_spare) if lo >= 0 and self.guessed else self.origin
        if self.rate is None or self.guessed >= GUESSES or lo >= last or base is None:
            return last
        (at, spare), (falls, tokens) = base, self.rate
        if spare is None or spare < 0 or falls <= 0 or tokens <= 0:
            return last
        zero = at + spare * tokens // falls
        at_zero = 0 if ctx_of(0) > zero else _at_or_below(zero, 0, last, ctx_of) + (1 if self.guessed else 0)
        return min(max(at_zero, lo + 1), last)

    def after(self, i: int, fits: bool, spare: int | None) -> Aim:
        if self.hi is None:
            guessed = self.guessed + (i < self.n - 1)
            if fits:
                return replace(self, lo=i, lo_spare=spare, lo_at=None, hi=self.n if i == self.n - 1 else None,
                               guessed=guessed)
            return replace(self, hi=i, hi_spare=spare, guessed=guessed)
        aimed = self.aimed + (self.lo >= 0)
        if fits:
            return replace(self, lo=i, lo_spare=spare, lo_at=None, aimed=aimed)
        return replace(self, hi=i, hi_spare=spare, aimed=aimed)


def _at_or_below(ctx: int, lo: int, hi: int, ctx_of: Callable[[int], int]) -> int:
    """The last candidate in [lo, hi] whose ctx is at most `ctx` (lo when none is)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ctx_of(mid) <= ctx else (lo, mid)
    return hi if ctx_of(hi) <= ctx else lo
