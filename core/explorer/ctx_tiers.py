"""Context tiers: the full load at 4k, 8k, 16k, 32k, 64k and 128k tokens (up to the trained context) and at the
largest context that fits — memory, GPU layers and speed each, so a person sees what context costs.

Rule 1: each tier is `full_load` at that ctx asked (the same call `fit --ctx N` makes), so a tier's figures are
        exactly `fit --ctx N`'s (a tier's own largest ctx is not shown, so not searched); the largest-that-fits tier
        is the full load's own `max_ctx` (None when nothing fits).
Rule 2: tiers run from 4,096 tokens by doublings up to the trained context (never past it), the trained context
        itself when it is not a power-of-two step, then the largest that fits when it is none of those (and no more
        than a person may ask, `ranges.CONTEXT`: a hostile header's trained context is no tier).
Rule 3: a tier's memory is the one peak figure once its context has filled (`load_tier.peak_memory`, the figure
        `fit` prints and its JSON's `peak_memory.full`), its tier fits / tight / won't (`load_tier`) and each device's need (weights + KV + what the server holds); its speed the decode at the start
        and the time to the first token for the state's prompt.
Rule 4: a tier's figures are its asked ctx's alone; which tier is the chosen ctx and which the largest that fits are
        marks set beside them (`marked`), so a tick that moves only those marks judges no tier again (`derive` Rule 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.load_tier import LoadTier, load_tier, peak_memory
from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.ranges import CONTEXT
from gguf_budget.core.units import human_bytes

TIER_TOP = 131_072


@dataclass(frozen=True, kw_only=True)
class CtxTier:
    """One tier (Rule 3)."""

    ctx: int
    largest: bool
    chosen: bool
    verdict: FitVerdict
    tier: LoadTier | None
    gpu_layers: int
    peak_rss: int | None
    needs: tuple[tuple[str, int | None], ...]
    tok_s: float | None
    ttft_s: float | None


def tier_ctxs(context_length: int | None) -> tuple[int, ...]:
    """Rule 2's fixed tiers for a model trained on `context_length` tokens (4096 … 131072)."""
    top = min(context_length or DEFAULT_CTX, TIER_TOP)
    out, ctx = [], DEFAULT_CTX
    while ctx <= top:
        out.append(ctx)
        ctx *= 2
    if context_length and context_length <= TIER_TOP and context_length not in out:
        out.append(context_length)
    return tuple(out or [top])


def tier_asks(model: ModelSpec, largest: int | None) -> tuple[int, ...]:
    """Rule 2: the ctxs asked for the tiers beside a full load whose largest ctx that fits is `largest`."""
    ctxs = tier_ctxs(model.context_length)
    extra = largest is not None and largest not in ctxs and CONTEXT.contains(largest)
    return (*ctxs, largest) if extra and largest is not None else ctxs


def tier_figures(model: ModelSpec, state: ExplorerState, asks: tuple[int, ...],
                 kept: Mapping[int, CtxTier] | None = None) -> dict[int, CtxTier]:
    """Rules 1 and 3: each asked ctx's tier, unmarked (Rule 4), by the ctx asked. `kept`: tiers made before for the
    same state at any asked ctx (`derive` Rule 6); only the asks it lacks are judged."""
    prices = TokenPrices.of(model)
    known = kept or {}
    return {ctx: known.get(ctx) or _tier(full_load(model, replace(state, ctx=ctx), prices, largest=False))
            for ctx in asks}


def marked(figures: Mapping[int, CtxTier], chosen: FullLoad) -> tuple[CtxTier, ...]:
    """Rule 4: the tiers in ctx order, the chosen load's ctx and its largest ctx that fits marked; a tier whose marks
    stay is itself (a tick re-marks two tiers at most, not every one)."""
    out = []
    for ctx, t in figures.items():
        marks = (t.ctx == chosen.ctx, ctx == chosen.max_ctx)
        out.append(t if (t.chosen, t.largest) == marks else replace(t, chosen=marks[0], largest=marks[1]))
    return tuple(sorted(out, key=lambda t: t.ctx))


def _tier(load: FullLoad | None) -> CtxTier:
    assert load is not None
    fit, speed = load.fit, load.speed
    prefill = None if speed is None else speed.prefill
    judged = load_tier(fit)
    return CtxTier(ctx=load.ctx, largest=False, chosen=False, verdict=fit.verdict,
                   tier=None if judged is None else judged.tier, gpu_layers=fit.gpu_layers,
                   peak_rss=peak_memory(fit).full,
                   needs=tuple((d.name, d.need) for d in fit.devices), tok_s=None if speed is None else speed.tok_s,
                   ttft_s=None if prefill is None else prefill.ttft_s)


def ctx_tiers(model: ModelSpec, state: ExplorerState, chosen: FullLoad) -> tuple[CtxTier, ...]:
    """Rules 1–4 beside `chosen`, the full load on screen (its ctx is marked)."""
    return marked(tier_figures(model, state, tier_asks(model, chosen.max_ctx)), chosen)


def rate_text(tok_s: float | None) -> str:
    """Decode speed as a person reads it: tokens a second, or seconds a token below one."""
    if tok_s is None:
        return "—"
    return f"≈ {tok_s:.1f} tok/s" if tok_s >= 1 else f"≈ {1 / tok_s:.1f} s/token"


def _short(t: CtxTier) -> str:
    """The verdict in a word or two; "tight" where it fits only tightly (`load_tier`), never "fits"."""
    return "tight" if t.tier is LoadTier.TIGHT else VERDICT_SHORT[t.verdict]


def tiers_text(tiers: tuple[CtxTier, ...]) -> str:
    """`fit --tiers`: one row a tier, the chosen ctx (▶) and the largest that fits (★) marked in a column of their own,
    so a row stays within the CLI's 100 columns."""
    rows = ["Context tiers (each is fit --ctx N; host: peak RSS at a full context; GPUs: weights + KV + server)",
            f"    {'ctx':>9}  {'full load':<12} {'GPU layers':>10}  {'host':>10}  {'GPUs':>10}  {'decode':>15}  "
            f"{'first token':>11}"]
    for t in tiers:
        marks = ("▶" if t.chosen else " ") + ("★" if t.largest else " ")
        peak = human_bytes(t.peak_rss) if t.peak_rss is not None else "—"
        gpu_needs = [n for name, n in t.needs if name != "host"]
        gpus = "—" if not gpu_needs or None in gpu_needs else human_bytes(sum(n or 0 for n in gpu_needs))
        ttft = f"≈ {t.ttft_s:.2f} s" if t.ttft_s is not None else "—"
        rows.append(f"  {marks}{t.ctx:>9,}  {_short(t):<12} {t.gpu_layers:>10}  {peak:>10}  {gpus:>10}  "
                    f"{rate_text(t.tok_s):>15}  {ttft:>11}".rstrip())
    rows.append(f"  {TIER_MARKS}")
    return "\n".join(rows)


TIER_MARKS = "▶ the chosen ctx   ★ the largest that fits"
"""The legend under `fit --tiers`' rows."""


def tiers_dicts(tiers: tuple[CtxTier, ...]) -> list[dict[str, object]]:
    """`fit --json`'s `tiers`."""
    return [{"ctx": t.ctx, "verdict": t.verdict.value,
             "tier": None if t.tier is None else t.tier.value, "gpu_layers": t.gpu_layers, "peak_rss": t.peak_rss,
             "needs": dict(t.needs), "tok_s": t.tok_s, "ttft_s": t.ttft_s, "chosen": t.chosen, "largest": t.largest}
            for t in tiers]


VERDICT_SHORT = {FitVerdict.FITS_GPU: "fits on GPU", FitVerdict.FITS_SPLIT: "fits split", FitVerdict.CPU_ONLY: "CPU only",
                 FitVerdict.DOES_NOT_FIT: "does not fit", FitVerdict.UNKNOWN: "unknown"}


@dataclass(frozen=True, kw_only=True)
class TierCell:
    """One tier as the window's strip draws it: two short lines (ctx and peak RAM; GPU layers and decode), the whole
    row — the GPUs' memory and the first token too — as its tooltip."""

    ctx: int
    lines: tuple[str, str]
    tip: str
    tier: str
    chosen: bool


def _gpus(t: CtxTier) -> str:
    gpu_needs = [n for name, n in t.needs if name != "host"]
    return "" if not gpu_needs or None in gpu_needs else human_bytes(sum(n or 0 for n in gpu_needs))


def tier_cells(tiers: tuple[CtxTier, ...]) -> tuple[TierCell, ...]:
    """The strip's words for `tiers` (the same figures as `tiers_text`)."""
    out = []
    for t in tiers:
        ctx = f"{t.ctx // 1024}k" if t.ctx % 1024 == 0 else f"{t.ctx:,}"
        label = f"{ctx} max" if t.largest else ctx
        peak = "—" if t.peak_rss is None else human_bytes(t.peak_rss)
        gpus = _gpus(t)
        ttft = "—" if t.ttft_s is None else f"≈ {t.ttft_s:.2f} s"
        lines = (f"{label} · {peak}", f"{t.gpu_layers} L · {rate_text(t.tok_s)}")
        largest = " (the largest that fits)" if t.largest else ""
        tip = (f"{t.ctx:,} tokens of context{largest}: {_short(t)}; peak RAM {peak} once the context has filled"
               + (f", GPUs {gpus}" if gpus else "") + f"; {t.gpu_layers} GPU layers; decode {rate_text(t.tok_s)}, "
               f"first token {ttft}. The same figures as `gguf-budget fit --ctx {t.ctx}`. Click to use this context.")
        out.append(TierCell(ctx=t.ctx, lines=lines, tip=tip,
                            tier="unknown" if t.tier is None else t.tier.value, chosen=t.chosen))
    return tuple(out)
