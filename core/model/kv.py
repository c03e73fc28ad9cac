"""The KV cache priced per layer, shared by the planner and the fit estimate.

Rule 1: an attention layer caches `cells · row(K) + cells · row(V)` bytes, where a row is
        n_head_kv · head dim elements stored in the cache type (quantized types by their
        real block size from `GGML_QUANT_SIZES`, e.g. q8_0 = 34 bytes per 32 elements).
Rule 2: a full-attention layer holds `ctx` cells; a sliding-window layer holds
        min(ctx, window + swa_extra) cells (`swa_extra` is 0 for the plain bound).
Rule 3: a recurrent layer holds its fixed F32 state, independent of ctx.
Rule 4: a layer whose facts are unknown makes the total unknown (None) — never 0.
Rule 5: the engine-accurate variant is llama.cpp's allocation for one sequence: the context
        is padded to a multiple of 256 cells (`ENGINE_CELL_PAD`, llama-context.cpp
        `llama_context::llama_context`: `cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)`), and a
        sliding-window layer holds min(padded ctx, window + n_ubatch) cells (llama-kv-cache-iswa.cpp
        `llama_kv_cache_iswa`: `size_swa = min(size_base, n_swa + n_ubatch)`, n_ubatch 512 by
        default, common/common.h). Recurrent state is Rule 3 (llama-memory-recurrent.cpp: F32).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

from gguf_budget.core.model.spec import LayerAttention, ModelSpec

KV_TYPES: dict[str, GGMLQuantizationType] = {
    "f16": GGMLQuantizationType.F16,
    "f32": GGMLQuantizationType.F32,
    "bf16": GGMLQuantizationType.BF16,
    "q8_0": GGMLQuantizationType.Q8_0,
    "q4_0": GGMLQuantizationType.Q4_0,
}
DEFAULT_KV_TYPE = "f16"


def row_bytes(kv_type: str, n_elements: int) -> int:
    """Bytes of one cache row; a partial trailing block still costs a whole block."""
    block, size = GGML_QUANT_SIZES[KV_TYPES[kv_type]]
    return -(-n_elements // block) * size


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


def layer_cells(layer: LayerAttention, ctx: int, swa_extra: int = 0) -> int:
    if layer.kind == "swa" and layer.window is not None:
        return min(ctx, layer.window + swa_extra)
    return ctx


def layer_kv_bytes(layer: LayerAttention, cells: int, kv_type: str) -> int:
    n_kv = layer.n_head_kv or 0
    return cells * (row_bytes(kv_type, n_kv * (layer.k_dim or 0)) + row_bytes(kv_type, n_kv * (layer.v_dim or 0)))


def kv_breakdown(
    model: ModelSpec,
    ctx: int,
    kv_type: str = DEFAULT_KV_TYPE,
    *,
    swa_extra: int = 0,
    layers: range | None = None,
) -> KVBreakdown:
    """KV bytes for `ctx` tokens over `layers` (all by default)."""
    attention = recurrent = n_attn = n_swa = n_rec = n_unknown = 0
    for il in layers if layers is not None else range(model.n_layer):
        layer = model.layers[il]
        if layer.kind == "recurrent":
            n_rec += 1
            if model.recurrent_state_bytes is None:
                n_unknown += 1
            else:
                recurrent += model.recurrent_state_bytes
        elif layer.kind == "unknown":
            n_unknown += 1
        else:
            n_attn += 1
            n_swa += layer.kind == "swa"
            attention += layer_kv_bytes(layer, layer_cells(layer, ctx, swa_extra), kv_type)
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


def kv_price(model: ModelSpec, kv_type: str = DEFAULT_KV_TYPE, *, swa_extra: int = 0) -> KVPrice:
    full = 0
    swa: dict[int, int] = {}
    fixed = 0
    known = True
    for layer in model.layers:
        if layer.kind == "recurrent":
            known &= model.recurrent_state_bytes is not None
            fixed += model.recurrent_state_bytes or 0
        elif layer.kind == "unknown":
            known = False
        elif layer.kind == "swa" and layer.window is not None:
            w = layer.window + swa_extra
            swa[w] = swa.get(w, 0) + layer_kv_bytes(layer, 1, kv_type)
        else:
            full += layer_kv_bytes(layer, 1, kv_type)
    return KVPrice(full, tuple(sorted(swa.items())), fixed, known)


ENGINE_CELL_PAD = 256
ENGINE_UBATCH = 512


def engine_cells(ctx: int) -> int:
    """The cells llama.cpp allocates for `ctx` tokens (Rule 5)."""
    return -(-ctx // ENGINE_CELL_PAD) * ENGINE_CELL_PAD


def engine_kv_breakdown(
    model: ModelSpec,
    ctx: int,
    kv_type: str = DEFAULT_KV_TYPE,
    *,
    ubatch: int = ENGINE_UBATCH,
    layers: range | None = None,
) -> KVBreakdown:
    """KV bytes as llama.cpp allocates them for `ctx` tokens of one sequence."""
    return kv_breakdown(model, engine_cells(ctx), kv_type, swa_extra=ubatch, layers=layers)


def layer_kv_table(model: ModelSpec, ctx: int, kv_type: str = DEFAULT_KV_TYPE, *,
                   swa_extra: int = 0) -> tuple[int | None, ...]:
    """Bytes each layer keeps for `ctx` cells (its fixed state when recurrent); None where unknown.

    Layers of one shape share a per-cell price, so an 80-layer model costs a few row lookups.
    """
    per_cell: dict[tuple[int | None, int | None, int | None], int] = {}
    out: list[int | None] = []
    for layer in model.layers:
        if layer.kind == "recurrent":
            out.append(model.recurrent_state_bytes)
        elif layer.kind == "unknown":
            out.append(None)
        else:
            shape = (layer.n_head_kv, layer.k_dim, layer.v_dim)
            price = per_cell.get(shape)
            if price is None:
                price = per_cell[shape] = layer_kv_bytes(layer, 1, kv_type)
            out.append(layer_cells(layer, ctx, swa_extra) * price)
    return tuple(out)
