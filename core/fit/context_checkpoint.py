"""The size of one llama-server context checkpoint, and how many a server keeps.

A checkpoint is the part of a sequence's memory that cannot be rolled back, copied to host RAM so
a later prompt that shares a prefix can resume from it. Read in `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: who makes them (tools/server/server-context.cpp `update_slots`): a model whose memory
        cannot drop the end of a sequence — sliding-window layers (unless `--swa-full`) or
        recurrent layers. A model with only full attention never makes one.
Rule 2: one checkpoint is `llama_state_seq_get_data_ext(…, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY)`
        (common/common.cpp `common_prompt_checkpoint::update_tgt`): 8 bytes (magic, sequence id;
        src/llama-context.cpp `state_seq_get_data`) and then only the sliding-window cache
        (src/llama-kv-cache-iswa.cpp `state_write`) or only the recurrent state
        (src/llama-memory-hybrid.cpp `state_write`).
Rule 3: the sliding-window cache's part (src/llama-kv-cache.cpp `state_write`, `state_write_meta`,
        `state_write_data`): 4 bytes (stream count) and 4 per stream (cell count); for the stream
        holding the sequence, 12 bytes per cell (position, one sequence id and its count), 8
        (V layout, layer count), and per sliding layer 12 + cells · K row bytes and 12 + cells · V
        row bytes. The cells are those the window still sees: min(tokens, n_swa) at most
        (`is_masked_swa`), so a full checkpoint holds n_swa cells.
Rule 4: the recurrent part (src/llama-memory-recurrent.cpp `state_write`): 4 (cell count), 8 (one
        cell's position and id count), 8 (layout, layer count), and per recurrent layer
        24 bytes of types and row sizes plus its state for one sequence (F32).
Rule 5: how many (server-context.cpp `create_checkpoint`): at most `--ctx-checkpoints` per slot
        (default 32, common/common.h `n_ctx_checkpoints`; 0 turns them off); the oldest goes
        when the list is full. Each slot keeps its own, so a server holds at most
        slots · N · one checkpoint — the "full" figure the ledger counts.
"""

from __future__ import annotations

from gguf_budget.core.fit.slots import SlotLayout
from gguf_budget.core.model.kv import layer_kvs
from gguf_budget.core.model.spec import LayerKind, ModelSpec

DEFAULT_CTX_CHECKPOINTS = 32
STATE_HEADER = 8
STREAM_HEADER = 4
CELL_META = 12
DATA_HEADER = 8
ROW_HEADER = 12
RECURRENT_HEADER = 4 + 8 + 8
RECURRENT_LAYER_HEADER = 24


def makes_checkpoints(model: ModelSpec, swa_full: bool) -> bool:
    """Rule 1."""
    kinds = {layer.kind for layer in model.layers}
    return LayerKind.RECURRENT in kinds or (LayerKind.SWA in kinds and not swa_full)


def checkpoint_bytes(model: ModelSpec, kv_type: str, layout: SlotLayout, swa_full: bool = False) -> int | None:
    """Rules 2–4: one full checkpoint of one sequence; 0 when the model makes none, None when a fact is missing."""
    if not makes_checkpoints(model, swa_full):
        return 0
    recurrent = [layer.kind is LayerKind.RECURRENT for layer in model.layers]
    if any(recurrent):
        state = model.recurrent_state_bytes
        if state is None:
            return None
        n = sum(recurrent)
        return STATE_HEADER + RECURRENT_HEADER + n * (RECURRENT_LAYER_HEADER + state)
    prices = [p for p, layer in zip(layer_kvs(model, kv_type), model.layers, strict=True) if layer.kind is LayerKind.SWA]
    if any(p is None for p in prices):
        return None
    window = max((layer.window or 0 for layer in model.layers), default=0)
    rows = sum(2 * ROW_HEADER + p.per_cell * window for p in prices if p is not None)
    return STATE_HEADER + STREAM_HEADER * (1 + layout.streams) + CELL_META * window + DATA_HEADER + rows


def checkpoints_bytes(model: ModelSpec, kv_type: str, layout: SlotLayout, per_slot: int,
                      swa_full: bool = False) -> int | None:
    """Rule 5: every slot's checkpoints, each list full."""
    one = checkpoint_bytes(model, kv_type, layout, swa_full)
    return None if one is None else one * per_slot * layout.n_seq
