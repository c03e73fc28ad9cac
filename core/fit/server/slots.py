"""llama-server's parallel slots: how many sequences, how the KV cache is shared or split among them.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE` (the llama.cpp vendored in llama-cpp-python 0.3.36):

Rule 1: `-np N` gives N slots (N ≥ 1; 0 is refused, common/arg.cpp `--parallel`). llama-server's
        default is `-np -1`, automatic (common/arg.cpp `common_params_parser_init`): it becomes 4
        slots with a unified KV cache (tools/server/server.cpp `main`: "n_parallel is set to auto,
        using n_parallel = 4 and kv_unified = true"). With an explicit N the cache is unified only
        with `--kv-unified` (common/common.h `kv_unified = false`).
Rule 2: the context (src/llama-context.cpp, `llama_context::llama_context`): n_ctx = -c padded up to
        256. Unified: one stream of n_ctx cells, and each sequence may use all of them
        (n_ctx_seq = n_ctx). Split: n_ctx_seq = n_ctx / N padded up to 256, n_ctx becomes
        n_ctx_seq · N, and the cache holds N streams of n_ctx_seq cells (src/llama-kv-cache.cpp,
        `n_stream = unified ? 1 : n_seq_max`).
Rule 3: a slot's context is min(n_ctx_seq, the trained context) (tools/server/server-context.cpp
        `n_ctx_slot`). Unified slots share the one pool: together they hold n_ctx tokens.
Rule 4: per layer, per stream: a full-attention layer holds n_ctx_seq cells; a sliding-window
        layer min(n_ctx_seq, n_swa · (N when unified, else 1) + n_ubatch) cells padded up to 256
        (src/llama-kv-cache-iswa.cpp), every cell with `--swa-full`; a recurrent layer keeps its
        state once per sequence (src/llama-model.cpp `create_memory`: `recurrent_rs_size =
        max(1, n_seq_max)`).
Rule 5: outputs: the server allows n_outputs_max = min(n_batch, N · (1 + n_draft)) logits rows
        per batch (server-context.cpp `server_output_limits`, common/speculative.cpp
        `common_speculative_get_output_limits`; n_draft is 0 without speculative decoding); the
        compute graph is reserved for min(n_ubatch, n_ctx) tokens, rounded up to a multiple of N
        (llama-context.cpp `sched_reserve`, `graph_reserve`), and as many of those outputs; the
        output buffer starts at N rows of n_vocab floats (`output_reserve(n_seq_max)`).
With one slot every rule reduces to the single-sequence figures of `model.kv` Rule 5.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.kv import ENGINE_CELL_PAD, KVType, layer_kv_shapes
from gguf_budget.core.model.spec import ModelSpec

AUTO_SLOTS = 4
DEFAULT_N_BATCH = 2048
MAX_SLOTS = 256  # llama.cpp's LLAMA_MAX_SEQ


def pad(n: int) -> int:
    """Up to the next multiple of 256 cells."""
    return -(-n // ENGINE_CELL_PAD) * ENGINE_CELL_PAD


@dataclass(frozen=True)
class SlotLayout:
    """The slots a server runs (Rule 1): how many, and whether they share one KV stream."""

    n_seq: int = 1
    unified: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.n_seq <= MAX_SLOTS:
            raise RequestError(f"parallel slots must be from 1 to {MAX_SLOTS}")

    @property
    def streams(self) -> int:
        return 1 if self.unified else self.n_seq

    def ctx_seq(self, ctx: int) -> int:
        """Rule 2: the cells of one stream (n_ctx_seq)."""
        n_ctx = pad(ctx)
        return n_ctx if self.unified else pad(n_ctx // self.n_seq or 1)

    def total_cells(self, ctx: int) -> int:
        """Rule 2: n_ctx as llama.cpp settles it (every stream's cells)."""
        return self.ctx_seq(ctx) * self.streams

    def slot_ctx(self, ctx: int, trained: int | None) -> int:
        """Rule 3: the most tokens one slot may hold."""
        seq = self.ctx_seq(ctx)
        return min(seq, trained) if trained else seq

    def swa_cells(self, ctx: int, window: int, ubatch: int) -> int:
        """Rule 4: a sliding-window layer's cells per stream."""
        held = window * (self.n_seq if self.unified else 1) + ubatch
        return pad(min(self.ctx_seq(ctx), held))

    def reserve_tokens(self, ctx: int, ubatch: int) -> int:
        """Rule 5: the tokens of the graph llama.cpp reserves, min(n_ubatch, n_ctx) rounded up to a multiple of N."""
        tokens = min(ubatch, self.total_cells(ctx))
        return -(-tokens // self.n_seq) * self.n_seq

    def outputs(self, n_draft: int = 0, n_batch: int = DEFAULT_N_BATCH) -> int:
        """Rule 5: n_outputs_max."""
        return max(1, min(n_batch, self.n_seq * (1 + max(n_draft, 0))))


def resolve_slots(n_parallel: int | None, kv_unified: bool | None) -> SlotLayout:
    """Rule 1: `-np` (None: automatic) and `--kv-unified`/`--no-kv-unified` (None: not given)."""
    if n_parallel is None:
        return SlotLayout(AUTO_SLOTS, True if kv_unified is None else kv_unified)
    return SlotLayout(n_parallel, bool(kv_unified))


def slot_kv_table(model: ModelSpec, ctx: int, kv_type: KVType, layout: SlotLayout, *, ubatch: int,
                  swa_full: bool, v_type: KVType | None = None) -> tuple[int | None, ...]:
    """Bytes each layer's cache holds for `ctx` under `layout` (Rules 2 and 4); None where unknown."""
    seq = layout.ctx_seq(ctx)
    distinct, place = layer_kv_shapes(model, kv_type, swa_full=swa_full, v_type=v_type)
    held: list[int | None] = []
    for price in distinct:  # each shape once (`kv.layer_kv_shapes`)
        if price is None:
            held.append(None)
            continue
        cells = seq if price.cap is None else layout.swa_cells(ctx, price.cap, ubatch)
        held.append(price.per_cell * cells * layout.streams + price.fixed * layout.n_seq)
    return tuple(map(held.__getitem__, place))
