"""The KV cache priced per layer, shared by the planner and the fit estimate.

Rule 1: an attention layer caches `cells · row(K) + cells · row(V)` bytes, where a row is
        n_head_kv · head dim elements stored in the cache type (quantized types by their
        real block size from `GGML_QUANT_SIZES`, e.g. q8_0 = 34 bytes per 32 elements).
Rule 2: a full-attention layer holds `ctx` cells; a sliding-window layer holds
        min(ctx, window + swa_extra) cells (`swa_extra` is 0 for the plain bound).
Rule 3: a recurrent layer holds its fixed F32 state, independent of ctx.
Rule 4: a layer whose facts are unknown makes the total unknown (None) — never 0.
        `layer_kv` states Rules 1–4 once, for one layer; the breakdown, the price the planner
        searches with and the per-layer table the fit estimate places are sums of it.
Rule 5: the engine-accurate variant is llama.cpp's allocation for one sequence (the rules of
        `core.llama_cpp.LLAMA_CPP_SOURCE`): the context is padded to a multiple of 256 cells
        (`ENGINE_CELL_PAD`, llama-context.cpp: `cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)`), and
        a sliding-window layer holds min(padded ctx, window + n_ubatch) cells rounded UP to a
        multiple of 256 (llama-kv-cache-iswa.cpp: `size_swa = GGML_PAD(std::min(size_base,
        n_swa + n_ubatch), 256)`; n_ubatch 512 by default, common/common.h) — a window of 100 holds
        768 cells, not 612. With `--swa-full` a sliding layer holds every cell (`size_swa = size_base`).
        Recurrent state is Rule 3 (llama-memory-recurrent.cpp: F32).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

from gguf_budget.core.model.spec import LayerAttention, LayerKind, ModelSpec
from gguf_budget.core.vocab import TextEnum


class KVType(TextEnum):
    """The cache element types llama.cpp's `--cache-type-k/-v` accept (common/arg.cpp `kv_cache_types`)."""

    F16 = "f16"
    F32 = "f32"
    BF16 = "bf16"
    Q8_0 = "q8_0"
    Q4_0 = "q4_0"
    Q4_1 = "q4_1"
    IQ4_NL = "iq4_nl"
    Q5_0 = "q5_0"
    Q5_1 = "q5_1"

    @property
    def quantized(self) -> bool:
        """A block-quantized cache: llama.cpp needs flash attention for such a V cache, and rotates K and V for it."""
        return self not in (KVType.F16, KVType.F32, KVType.BF16)


KV_TYPES: Mapping[KVType, GGMLQuantizationType] = MappingProxyType({
    KVType.F16: GGMLQuantizationType.F16,
    KVType.F32: GGMLQuantizationType.F32,
    KVType.BF16: GGMLQuantizationType.BF16,
    KVType.Q8_0: GGMLQuantizationType.Q8_0,
    KVType.Q4_0: GGMLQuantizationType.Q4_0,
    KVType.Q4_1: GGMLQuantizationType.Q4_1,
    KVType.IQ4_NL: GGMLQuantizationType.IQ4_NL,
    KVType.Q5_0: GGMLQuantizationType.Q5_0,
    KVType.Q5_1: GGMLQuantizationType.Q5_1,
})
DEFAULT_KV_TYPE = KVType.F16


def row_bytes(kv_type: KVType, n_elements: int) -> int:
    """Bytes of one cache row; a partial trailing block still costs a whole block."""
    block, size = GGML_QUANT_SIZES[KV_TYPES[KVType(kv_type)]]
    return -(-n_elements // block) * size


@dataclass(frozen=True)
class LayerKV:
    """One layer's cache for any ctx: `per_cell` bytes for each of min(cells, cap) cells, plus `fixed`.

    `cap` is None when the layer holds every cell (full attention, or a recurrent state whose
    `per_cell` is 0). A capped layer's cells are rounded up to a multiple of `pad` (Rule 5).
    """

    per_cell: int
    cap: int | None
    fixed: int
    pad: int = 1

    def at(self, cells: int) -> int:
        held = cells if self.cap is None else -(-min(cells, self.cap) // self.pad) * self.pad
        return held * self.per_cell + self.fixed


def layer_kv(layer: LayerAttention, kv_type: KVType, state_bytes: int | None, *, swa_extra: int = 0, swa_pad: int = 1,
             swa_full: bool = False, v_type: KVType | None = None) -> LayerKV | None:
    """Rules 1–5 for one layer: what it caches, or None when its facts are unknown. `v_type` is the V cache's
    type where it differs from K's (llama.cpp's `-ctv` beside `-ctk`)."""
    if layer.kind is LayerKind.RECURRENT:
        return None if state_bytes is None else LayerKV(0, None, state_bytes)
    if layer.kind is LayerKind.UNKNOWN:
        return None
    n_kv = layer.n_head_kv or 0
    per_cell = (row_bytes(kv_type, n_kv * (layer.k_dim or 0))
                + row_bytes(v_type if v_type is not None else kv_type, n_kv * (layer.v_dim or 0)))
    sliding = layer.kind is LayerKind.SWA and layer.window is not None and not swa_full
    return LayerKV(per_cell, (layer.window or 0) + swa_extra, 0, swa_pad) if sliding else LayerKV(per_cell, None, 0)


@per_model(maxsize=64)
def layer_kvs(model: ModelSpec, kv_type: KVType, *, swa_extra: int = 0, swa_pad: int = 1,
              swa_full: bool = False, v_type: KVType | None = None) -> tuple[LayerKV | None, ...]:
    """`layer_kv` of every layer; layers of one shape share one price, so 80 layers cost a few lookups. Kept by
    its inputs: a full load asks it a dozen times per slider tick, and each ask hashed all 80 layers."""
    seen: dict[LayerAttention, LayerKV | None] = {}
    for layer in model.layers:
        if layer not in seen:
            seen[layer] = layer_kv(layer, kv_type, model.recurrent_state_bytes, swa_extra=swa_extra, swa_pad=swa_pad,
                                   swa_full=swa_full, v_type=v_type)
    return tuple(seen[layer] for layer in model.layers)


@per_model(maxsize=64)
def layer_kv_shapes(model: ModelSpec, kv_type: KVType, *, swa_extra: int = 0, swa_pad: int = 1,
                    swa_full: bool = False, v_type: KVType | None = None) -> tuple[tuple[LayerKV | None, ...],
                                                                                  tuple[int, ...]]:
    """`layer_kvs`' distinct prices, and each layer's place among them: a table at a new ctx prices each shape once
    and repeats it (a 70B's 80 layers are one shape), where pricing every layer cost a ctx tick ~5 walks of 80."""
    prices = layer_kvs(model, kv_type, swa_extra=swa_extra, swa_pad=swa_pad, swa_full=swa_full, v_type=v_type)
    distinct = tuple(dict.fromkeys(prices))
    place = {p: i for i, p in enumerate(distinct)}
    return distinct, tuple(place[p] for p in prices)


@dataclass(frozen=True)
class KVBreakdown:
    """KV bytes split by layer kind; `total` is None when any layer's facts are unknown."""

    attention: int
    recurrent: int
    attention_layers: int
    swa_layers: int
    recurrent_layers: int
    unknown_layers: int

    @property
    def total(self) -> int | None:
        return None if self.unknown_layers else self.attention + self.recurrent


def kv_breakdown(
    model: ModelSpec,
    ctx: int,
    kv_type: KVType = DEFAULT_KV_TYPE,
    *,
    swa_extra: int = 0,
    swa_pad: int = 1,
    swa_full: bool = False,
    layers: range | None = None,
) -> KVBreakdown:
    """KV bytes for `ctx` tokens over `layers` (all by default)."""
    prices = layer_kvs(model, kv_type, swa_extra=swa_extra, swa_pad=swa_pad, swa_full=swa_full)
    attention = recurrent = n_attn = n_swa = n_rec = n_unknown = 0
    for il in layers if layers is not None else range(model.n_layer):
        kind, price = model.layers[il].kind, prices[il]
        n_rec += kind is LayerKind.RECURRENT
        n_attn += kind in (LayerKind.FULL, LayerKind.SWA)
        n_swa += kind is LayerKind.SWA
        if price is None:
            n_unknown += 1
        elif kind is LayerKind.RECURRENT:
            recurrent += price.at(ctx)
        else:
            attention += price.at(ctx)
    return KVBreakdown(attention, recurrent, n_attn, n_swa, n_rec, n_unknown)


@dataclass(frozen=True)
class KVPrice:
    """KV bytes as a function of ctx, precomputed so a search can ask for many ctx cheaply.

    at(ctx) = ctx · per_token_full + Σ min(ctx, window) · per_token (sliding layers) + fixed.
    `known` is False when some layer's facts are missing (then `at` is a lower bound).
    """

    per_token_full: int
    swa: tuple[tuple[int, int], ...]
    fixed: int
    known: bool

    def at(self, ctx: int) -> int:
        return ctx * self.per_token_full + sum(min(ctx, w) * b for w, b in self.swa) + self.fixed


def kv_price(model: ModelSpec, kv_type: KVType = DEFAULT_KV_TYPE, *, swa_extra: int = 0) -> KVPrice:
    """The layers' `LayerKV`s summed by cap: one full-ctx rate, one rate per window, the fixed states.

    The plain bound the planner searches with: no engine padding (Rule 5 is `engine_layer_kv_table`).
    """
    full = fixed = 0
    swa: dict[int, int] = {}
    known = True
    for price in layer_kvs(model, kv_type, swa_extra=swa_extra):
        if price is None:
            known = False
            continue
        if price.cap is None:
            full += price.per_cell
        else:
            swa[price.cap] = swa.get(price.cap, 0) + price.per_cell
        fixed += price.fixed
    return KVPrice(full, tuple(sorted(swa.items())), fixed, known)


ENGINE_CELL_PAD = 256
ENGINE_UBATCH = 512


def engine_cells(ctx: int) -> int:
    """The cells llama.cpp allocates for `ctx` tokens (Rule 5)."""
    return -(-ctx // ENGINE_CELL_PAD) * ENGINE_CELL_PAD


def engine_kv_breakdown(
    model: ModelSpec,
    ctx: int,
    kv_type: KVType = DEFAULT_KV_TYPE,
    *,
    ubatch: int = ENGINE_UBATCH,
    swa_full: bool = False,
    layers: range | None = None,
) -> KVBreakdown:
    """KV bytes as llama.cpp allocates them for `ctx` tokens of one sequence (Rule 5)."""
    return kv_breakdown(model, engine_cells(ctx), kv_type, swa_extra=ubatch, swa_pad=ENGINE_CELL_PAD,
                        swa_full=swa_full, layers=layers)


def layer_kv_table(model: ModelSpec, ctx: int, kv_type: KVType = DEFAULT_KV_TYPE, *, swa_extra: int = 0,
                   swa_pad: int = 1, swa_full: bool = False) -> tuple[int | None, ...]:
    """Bytes each layer keeps for `ctx` cells (its fixed state when recurrent); None where unknown."""
    distinct, place = layer_kv_shapes(model, kv_type, swa_extra=swa_extra, swa_pad=swa_pad, swa_full=swa_full)
    held = [None if p is None else p.at(ctx) for p in distinct]
    return tuple(map(held.__getitem__, place))


def engine_layer_kv_table(model: ModelSpec, ctx: int, kv_type: KVType = DEFAULT_KV_TYPE, *, ubatch: int = ENGINE_UBATCH,
                          swa_full: bool = False) -> tuple[int | None, ...]:
    """`layer_kv_table` as llama.cpp allocates it for `ctx` tokens of one sequence (Rule 5)."""
    return layer_kv_table(model, engine_cells(ctx), kv_type, swa_extra=ubatch, swa_pad=ENGINE_CELL_PAD,
                          swa_full=swa_full)
