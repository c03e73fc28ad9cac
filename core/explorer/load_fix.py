"""The cheapest fix for a full load that is tight or won't fit, and what it costs.

Rule 1: candidates, cheapest first: fewer slots (`-np 1`, llama-server with more than one), an 8-bit KV cache (q8_0,
        from f16), a smaller context (the context tiers below the load's, largest first), then a smaller
        quantization of the same model (priced, not downloaded: `quant.priced`), largest first, from the steps
        below the model's own type (`QUANT_STEPS`). Each changes one knob
        of the person's state and keeps the load's ctx (unless it is past what a person may ask), so its cost is
        that knob alone.
Rule 2: every candidate is priced by `full_load` (the one pricing path `fit`, `tune` and the window use) and judged
        by `load_tier`. The fix is the first candidate that fits; failing that (a load that won't fit), the first
        that is at least tight; None when no candidate helps. A fix is told by its fit and ctx alone, so no
        candidate's largest ctx is searched (`full_load` Rule 5: its `max_ctx` is None).
Rule 3: candidates are priced lazily and the search stops at the first that fits, so a load that one knob rescues
        costs one or two full loads; the smaller quantizations' mixes and token prices are made once per model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from dataclasses import dataclass, replace

from gguf_budget.core.errors import QuantMixError
from gguf_budget.core.explorer.ctx_tiers import tier_ctxs
from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.load_tier import LoadTier, load_tier
from gguf_budget.core.fit.server.slots import AUTO_SLOTS
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.file_types import BY_NAME, QuantName
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.ranges import CONTEXT
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.units import human_bytes
from gguf_budget.core.vocab import TextEnum

if TYPE_CHECKING:
    from gguf_budget.core.quant.mix import QuantMix

QUANT_STEPS = (QuantName.Q8_0, QuantName.Q6_K, QuantName.Q5_K_M, QuantName.Q4_K_M, QuantName.Q3_K_M, QuantName.Q2_K)


class FixKnob(TextEnum):
    """Which knob a fix turns (Rule 1's order)."""

    SLOTS = "slots"
    KV_TYPE = "kv type"
    CTX = "ctx"
    QUANT = "quant"


@dataclass(frozen=True, kw_only=True)
class Fix:
    """One priced candidate: the knob, the change in words, what it costs, and the tier it reaches (`load`: its fit and
    ctx; no largest ctx, Rule 2)."""

    knob: FixKnob
    change: str
    cost: str
    reaches: LoadTier
    load: FullLoad

    @property
    def text(self) -> str:
        return f"cheapest fix: {self.change} ({self.reaches}) — costs {self.cost}"


@dataclass(frozen=True)
class _Candidate:
    knob: FixKnob
    change: str
    cost: str
    model: ModelSpec
    state: ExplorerState
    prices: TokenPrices | None = None
    """The candidate model's token prices when it is not the person's model."""


def _slots(model: ModelSpec, state: ExplorerState) -> Iterator[_Candidate]:
    n = state.server.n_parallel
    if n is None or n > 1:
        was = f"auto: {AUTO_SLOTS} slots" if n is None else f"{n} slots"
        yield _Candidate(FixKnob.SLOTS, f"-np 1 (was {was})", "one request at a time", model,
                         replace(state, server=replace(state.server, n_parallel=1)))


def _kv(model: ModelSpec, state: ExplorerState) -> Iterator[_Candidate]:
    if state.kv_type is KVType.F16 and state.v_type in (None, KVType.F16):
        engine = replace(state.engine, flash_attn=True)
        yield _Candidate(FixKnob.KV_TYPE, "-ctk q8_0 -ctv q8_0 -fa on (was f16)",
                         "about half the KV cache's bytes, a slight loss of quality", model,
                         replace(state, kv_type=KVType.Q8_0, v_type=None, engine=engine))


def _ctx(model: ModelSpec, state: ExplorerState, ctx: int) -> Iterator[_Candidate]:
    for smaller in sorted((c for c in tier_ctxs(model.context_length) if c < ctx), reverse=True):
        yield _Candidate(FixKnob.CTX, f"-c {smaller:,} (was {ctx:,})", f"{ctx - smaller:,} tokens of context", model,
                         replace(state, ctx=smaller))


def _steps_below(model: ModelSpec) -> tuple[QuantName, ...]:
    """The steps after the model's own type (all of them for a type not among the steps)."""
    names = [n.value for n in QUANT_STEPS]
    own = model.file_type_name
    return QUANT_STEPS[names.index(own) + 1:] if own in names else QUANT_STEPS


@dataclass(frozen=True)
class _Priced:
    name: QuantName
    mix: QuantMix
    model: ModelSpec
    prices: TokenPrices


@per_model(maxsize=4)
def _smaller_quants(model: ModelSpec) -> tuple[_Priced, ...]:
    """Rule 3: the smaller types priced once per model (machine- and ctx-independent), so a ctx tick re-prices
    only their full loads. The quant pricing is imported here: most loads find their fix before this step, and
    `fit` pays the import only then."""
    from gguf_budget.core.quant.mix import PreparedModel, quant_mix
    from gguf_budget.core.quant.priced import priced_model
    prepared, out = PreparedModel.of(model), []
    for name in _steps_below(model):
        try:
            mix = quant_mix(prepared, BY_NAME[name])
        except QuantMixError:
            continue
        if mix.file_bytes < model.complete_file_bytes:
            priced = priced_model(model, mix)
            out.append(_Priced(name, mix, priced, TokenPrices.of(priced)))
    return tuple(out)


def _quants(model: ModelSpec, state: ExplorerState) -> Iterator[_Candidate]:
    for q in _smaller_quants(model):
        yield _Candidate(FixKnob.QUANT, f"{q.name.value} (priced, not downloaded; was {model.file_type_name or 'this file'})",
                         f"a {human_bytes(model.complete_file_bytes - q.mix.file_bytes)} smaller file at "
                         f"{q.mix.bits_per_weight:.2f} bits per weight: lower quality, and a new download",
                         q.model, state, q.prices)


def _pinned(state: ExplorerState, ctx: int) -> ExplorerState:
    """The state at the load's ctx; as it is when that ctx is past what a person may ask (a hostile header's)."""
    return replace(state, ctx=ctx) if CONTEXT.contains(ctx) else state


def _candidates(model: ModelSpec, state: ExplorerState, ctx: int) -> Iterator[_Candidate]:
    pinned = _pinned(state, ctx)
    yield from _slots(model, pinned)
    yield from _kv(model, pinned)
    yield from _ctx(model, pinned, ctx)
    yield from _quants(model, pinned)


def cheapest_fix(model: ModelSpec, state: ExplorerState, load: FullLoad, prices: TokenPrices) -> Fix | None:
    """Rules 1–3 for `load`, the full load of `state` (None when it fits, or nothing helps)."""
    judged = load_tier(load.fit)
    if judged is None or judged.tier is LoadTier.FITS:
        return None
    ctx = state.ctx if state.ctx is not None else load.ctx
    fallback: Fix | None = None
    for c in _candidates(model, state, ctx):
        priced = full_load(c.model, c.state, c.prices or prices, largest=False)
        assert priced is not None  # the state has a machine: `load` was priced on it
        tier = load_tier(priced.fit)
        if tier is None:
            continue
        fix = Fix(knob=c.knob, change=c.change, cost=c.cost, reaches=tier.tier, load=priced)
        if tier.tier is LoadTier.FITS:
            return fix
        if fallback is None and tier.tier is LoadTier.TIGHT and judged.tier is LoadTier.WONT:
            fallback = fix
    return fallback
