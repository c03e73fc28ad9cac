"""The RAM ledger: one line per peak-RSS contributor, priced from a model's real tensor bytes.

Prices (docs/budget-plan.md, "The ledger"; activations are fp32; dim = n_embd, ffn = max n_ff, q_dim = max n_head ·
k_dim, kv_dim = max n_head_kv · k_dim):

  base        BASE_BYTES, the calibrated process/allocator/tokenizer/thread slop
  scratch     (dim·8 + ffn·2 + q_dim + 2·kv_dim) · 4
  logits      n_vocab · 4
  attn        max n_head · ctx · 4 (one step's attention scores)
  resid       ctx · dim · 4 (prefill residual stream, persistent)
  out_norm    output_norm + position_embd (GPT-2) + every other global tensor (rope_freqs,
              blocks past block_count…): a loaded byte is never left unpriced
  embeddings  0 when the head is resident and tied; else min(table, row · min(n_vocab, ctx))
  lm_head     resident: the whole output table (token_embd when tied);
              streamed: a window of min(table, HEAD_WINDOW_LAYERS · largest layer)
  kv          `kv_price(model, kv_type).at(ctx)`: full ctx, windows for sliding layers,
              fixed state for recurrent layers (core/model/kv.py prices it, nobody else)
  ring        n_buffers · largest layer; 0 when every layer is pinned
  pinned      exact bytes of layers 0..k−1

A fact a line needs that the file does not give is reported by `missing_facts`; the planner
refuses such a model (PlanError) rather than pricing the unknown as 0.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, fields
from itertools import accumulate

from gguf_budget.core.model.kv import KVPrice, KVType, kv_price
from gguf_budget.core.model.spec import LayerKind, ModelSpec

MiB = 1024 * 1024
# Calibration constants (the layer-streaming runtime's, docs/budget-plan.md): measured slop of a running process — allocator arenas,
# tokenizer tables, thread stacks — that no tensor accounts for.
BASE_BYTES = 24 * MiB
# Every activation vector is fp32.
ACTIVATION_BYTES = 4
# Scratch holds 8 vectors of dim, 2 of ffn, one query row and 2 key/value rows.
SCRATCH_DIM_VECTORS, SCRATCH_FFN_VECTORS, SCRATCH_KV_VECTORS = 8, 2, 2
# A streamed head is read through a window as large as the ring's slot: one (largest) layer.
HEAD_WINDOW_LAYERS = 1



@dataclass(frozen=True, kw_only=True)
class MemLedger:
    """Bytes per peak-RSS contributor, one field a line in display order (`LEDGER_LINES`).

    `total()` is what a plan holds under its budget: the sum of every line.
    """

    base: int
    scratch: int
    logits: int
    attn: int
    resid: int
    out_norm: int
    embeddings: int
    lm_head: int
    kv: int
    ring: int
    pinned: int

    def total(self) -> int:
        return sum(getattr(self, name) for name in LEDGER_LINES)

    def items(self) -> tuple[tuple[str, int], ...]:
        return tuple((name, getattr(self, name)) for name in LEDGER_LINES)

    @property
    def mandatory(self) -> int:
        """What no knob but ctx can shrink: budget − weight_ceiling for a feasible plan."""
        return sum(getattr(self, name) for name in MANDATORY_LINES)

    @property
    def weights(self) -> int:
        """What the weight ceiling is spent on: every line but the mandatory ones (`WEIGHT_LINES`)."""
        return sum(getattr(self, name) for name in WEIGHT_LINES)


LEDGER_LINES: tuple[str, ...] = tuple(f.name for f in fields(MemLedger))
"""The ledger's lines, named once: `MemLedger`'s fields, in their order."""
MANDATORY_LINES = ("base", "scratch", "logits", "attn", "resid", "kv")
WEIGHT_LINES: tuple[str, ...] = tuple(name for name in LEDGER_LINES if name not in MANDATORY_LINES)
"""The lines the weight ceiling pays for: the output norm and globals, embeddings, head, ring and pinned layers."""


def missing_facts(model: ModelSpec) -> tuple[str, ...]:
    """Facts the ledger needs that the file does not give (empty: the model can be planned)."""
    missing = [name for name in ("n_layer",) if name in model.unknown]
    missing += [name for name in ("n_embd", "n_vocab", "n_ff", "n_head", "n_head_kv")
                if getattr(model, name) is None]
    if model.head_dim_k is None and (model.n_head_max or model.n_head_kv_max):
        missing.append("head_dim_k")
    if any(layer.kind is LayerKind.UNKNOWN for layer in model.layers):
        missing.append("attention facts of some layers (KV)")
    if any(layer.kind is LayerKind.RECURRENT for layer in model.layers) and model.recurrent_state_bytes is None:
        missing.append("recurrent_state")
    return tuple(missing)


@dataclass(frozen=True, kw_only=True)
class LedgerPrices:
    """A model's prices computed once, so a search can price many configurations cheaply."""

    scratch: int
    logits: int
    attn_per_token: int
    resid_per_token: int
    out_norm: int
    embd_table: int
    embd_row: int
    n_vocab: int
    tied: bool
    head_table: int
    head_window: int
    largest_layer: int
    prefix: tuple[int, ...]
    kv: KVPrice

    @classmethod
    def of(cls, model: ModelSpec, kv_type: KVType) -> LedgerPrices:
        """Prices of a model whose `missing_facts` are empty."""
        k_dim = model.head_dim_k or 0
        dim, vocab = model.n_embd or 0, model.n_vocab or 0
        scratch = (dim * SCRATCH_DIM_VECTORS + (model.n_ff_max or 0) * SCRATCH_FFN_VECTORS
                   + (model.n_head_max or 0) * k_dim + SCRATCH_KV_VECTORS * (model.n_head_kv_max or 0) * k_dim)
        g = model.global_bytes
        largest = model.largest_layer_bytes
        return cls(
            scratch=scratch * ACTIVATION_BYTES,
            logits=vocab * ACTIVATION_BYTES,
            attn_per_token=(model.n_head_max or 0) * ACTIVATION_BYTES,
            resid_per_token=dim * ACTIVATION_BYTES,
            out_norm=g.output_norm + (g.position_embd or 0) + g.other,
            embd_table=g.token_embd,
            embd_row=model.token_embd_row_bytes,
            n_vocab=vocab,
            tied=model.tied_embeddings,
            head_table=model.output_table_bytes,
            head_window=min(model.output_table_bytes, HEAD_WINDOW_LAYERS * largest),
            largest_layer=largest,
            prefix=tuple(accumulate(model.layer_bytes, initial=0)),
            kv=kv_price(model, kv_type),
        )

    @property
    def n_layer(self) -> int:
        return len(self.prefix) - 1

    def embeddings(self, ctx: int, stream_head: bool) -> int:
        if self.tied and not stream_head:
            return 0
        return min(self.embd_table, self.embd_row * min(self.n_vocab, ctx))

    def fixed(self, ctx: int, stream_head: bool) -> int:
        """Every line but ring and pinned: the cost of running at all at this ctx and head."""
        return (BASE_BYTES + self.scratch + self.logits + (self.attn_per_token + self.resid_per_token) * ctx
                + self.out_norm + self.embeddings(ctx, stream_head)
                + (self.head_window if stream_head else self.head_table) + self.kv.at(ctx))

    def max_pinned(self, room: int) -> int:
        """The most leading layers whose exact bytes fit in `room` (room ≥ 0)."""
        return bisect_right(self.prefix, room) - 1

    def ledger(self, ctx: int, stream_head: bool, n_buffers: int, n_pinned: int) -> MemLedger:
        streaming = n_pinned < self.n_layer
        return MemLedger(
            base=BASE_BYTES,
            scratch=self.scratch,
            logits=self.logits,
            attn=self.attn_per_token * ctx,
            resid=self.resid_per_token * ctx,
            out_norm=self.out_norm,
            embeddings=self.embeddings(ctx, stream_head),
            lm_head=self.head_window if stream_head else self.head_table,
            kv=self.kv.at(ctx),
            ring=n_buffers * self.largest_layer if streaming else 0,
            pinned=self.prefix[n_pinned],
        )
