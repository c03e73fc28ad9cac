"""llama-server's context checkpoints: how many one prompt leaves behind, and how big each is.

A sliding-window or recurrent model cannot roll its cache back, so llama-server (and llama-cli,
which runs it in-process) copies the part that cannot be rolled back into host memory at points
of a prompt, to resume from there when the next prompt shares that prefix. Each copy is a
`std::vector<uint8_t>` in the process: resident memory. Rules read in `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: checkpoints are made only for a model with sliding-window layers (unless `--swa-full`)
        or recurrent layers, and only when `--ctx-checkpoints` (`CTX_CHECKPOINTS`, 32 by
        default) is above 0 (tools/server/server-context.cpp `update_slots`: `do_checkpoint`).
Rule 2: a prompt is fed in batches of at most n_batch tokens; a batch also ends 4 + n_ubatch and
        4 tokens before the prompt's end (`checkpoint_offsets`), so that a checkpoint lands there.
        A checkpoint of the cache as it is *before* a batch is taken when that batch ends the
        prompt or ends within n_ubatch tokens of its end, and the cache already holds tokens
        (`pos_min >= 0`): a prompt of more than 4 + n_ubatch tokens leaves two, a shorter one
        (more than 4 tokens) one. (A chat prompt also checkpoints at the last user message's
        start, a few tokens in: a few KiB, left out.)
Rule 3: a slot keeps at most `--ctx-checkpoints` of them, the oldest erased first
        (`create_checkpoint`).
Rule 4: a checkpoint is `llama_state_seq_get_data_ext(…, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY)`:
        for a sliding-window model only the SWA cache (src/llama-kv-cache-iswa.cpp
        `state_write`), the cells not masked by the window — min(tokens held, n_swa) — each
        with its position and sequence id (12 bytes) and its K and V row in every sliding layer,
        plus headers (src/llama-kv-cache.cpp `state_write`, `state_write_meta`,
        `state_write_data`); for a recurrent or hybrid model its recurrent layers' state, one
        sequence (src/llama-memory-hybrid.cpp `state_write`). A cache split into one stream per
        slot (llama-server's `-np N` without `--kv-unified`) writes each stream's cell count: 4
        bytes more for every stream beyond the first.
Rule 5: a prompt-cache entry is the slot's whole state (`llama_state_seq_get_data_ext(…, 0)`,
        tools/server/server-context.cpp `prompt_save`): for a sliding-window model the full
        cache's cells (every token held) and then the SWA cache's as in Rule 4; for any other
        attention model every token's cell in every layer; each cache with Rule 4's headers.
Rule 6: a later turn of a conversation feeds only what its slot does not hold, from n_past on:
        Rule 2's batches start there, and a checkpoint is taken before any of them (the cache
        holds tokens) that ends the prompt or ends within n_ubatch tokens of its end.
Rule 7: when a slot's list is full (`--ctx-checkpoints` − 1 or more), adding one first erases
        every checkpoint of an earlier request that lies within `--checkpoint-min-step`
        (8192) tokens after the last one kept, then the oldest until there is room, and one at
        the same token count is replaced (`create_checkpoint`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.model.kv import KVType, row_bytes
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.layer_kinds import kind_counts
from gguf_budget.core.model.spec import LayerAttention, LayerKind, ModelSpec

CTX_CHECKPOINTS = 32  # common/common.h n_ctx_checkpoints (-ctxcp, --ctx-checkpoints)
CHECKPOINT_TAIL = 4  # server-context.cpp checkpoint_offsets {4 + n_ubatch, 4}
DEFAULT_BATCH = 2048  # common/common.h n_batch
DEFAULT_UBATCH = 512
MIN_STEP = 8192  # common/common.h checkpoint_min_step (-cms, --checkpoint-min-step)
CELL_META = 4 + 4 + 4  # pos, n_seq_id, one seq_id (state_write_meta)
STATE_HEAD = 4 + 4 + 4 + 4  # magic, seq_id (state_seq_get_data), n_stream, cell_count (state_write)
DATA_HEAD = 4 + 4  # v_trans, n_layer (state_write_data)
LAYER_HEAD = 4 + 8  # type, row size (or type, element size, n_embd_v_gqa for a transposed V)


@dataclass(frozen=True)
class CheckpointSettings:
    """What decides the checkpoints: llama-server's flags (`-ctxcp`, `-b`, `-ub`, `--swa-full`)."""

    max_checkpoints: int = CTX_CHECKPOINTS
    n_batch: int = DEFAULT_BATCH
    n_ubatch: int = DEFAULT_UBATCH
    swa_full: bool = False


def makes_checkpoints(model: ModelSpec, s: CheckpointSettings) -> bool:
    """Rule 1."""
    kinds = kind_counts(model)
    return s.max_checkpoints > 0 and (kinds[LayerKind.RECURRENT] > 0 or kinds[LayerKind.SWA] > 0 and not s.swa_full)


def checkpoint_positions(prompt_tokens: int, s: CheckpointSettings, held: int = 0) -> tuple[int, ...]:
    """Rules 2–3 and 6: the tokens the cache holds at each checkpoint a prompt leaves when its slot already
    holds `held` of them, oldest first."""
    n, ubatch = prompt_tokens, min(s.n_ubatch, s.n_batch)  # llama.cpp: n_ubatch = min(n_batch, n_ubatch)
    ends = {n - min(s.n_batch, CHECKPOINT_TAIL + ubatch), n - min(s.n_batch, CHECKPOINT_TAIL)}
    taken: list[int] = []
    start = held
    while start < n:
        end = min(start + s.n_batch, n)
        end = min((e for e in ends if start < e <= end), default=end)
        if start > 0 and (end == n or n < end + ubatch):
            taken.append(start)
        start = end
    return tuple(taken[-s.max_checkpoints:]) if s.max_checkpoints > 0 else ()


def keep_checkpoints(kept: list[tuple[int, int]], at: int, task: int, s: CheckpointSettings) -> list[tuple[int, int]]:
    """Rule 7: a slot's list of (tokens, request) once a checkpoint at `at` tokens is added by request `task`."""
    out = list(kept)
    if len(out) + 1 >= s.max_checkpoints:
        last, pruned = -1, []
        for n, t in out:
            if t != task and last >= 0 and n <= last + MIN_STEP:
                continue
            pruned.append((n, t))
            last = n
        out = pruned
    while out and len(out) >= s.max_checkpoints:
        out.pop(0)
    return [c for c in out if c[0] != at] + [(at, task)]


@per_model(maxsize=4096)
def checkpoint_bytes(model: ModelSpec, kv_type: KVType, tokens: int, streams: int = 1) -> int | None:
    """Rule 4: one checkpoint with `tokens` in the cache (of `streams` KV streams); None when a layer's facts are
    unknown."""
    recurrent = sum(layer.kind is LayerKind.RECURRENT for layer in model.layers)
    if recurrent:
        return None if model.recurrent_state_bytes is None else STATE_HEAD + recurrent * model.recurrent_state_bytes
    swa = [layer for layer in model.layers if layer.kind is LayerKind.SWA]
    if any(layer.window is None or layer.n_head_kv is None or layer.k_dim is None or layer.v_dim is None
           for layer in swa):
        return None
    cells = min(tokens, max((layer.window or 0 for layer in swa), default=0))
    head = STATE_HEAD + 4 * (streams - 1)
    if not swa or cells <= 0:
        return head
    rows = sum(row_bytes(kv_type, (layer.n_head_kv or 0) * (layer.k_dim or 0))
               + row_bytes(kv_type, (layer.n_head_kv or 0) * (layer.v_dim or 0)) for layer in swa)
    return head + cells * CELL_META + DATA_HEAD + 2 * LAYER_HEAD * len(swa) + cells * rows


def _cache_part(layers: list[LayerAttention], kv_type: KVType, cells: int, streams: int) -> int:
    """One KV cache's share of a state (Rule 4's layout): its headers, and `cells` cells of its layers."""
    head = 4 + 4 * streams  # n_stream, every stream's cell_count
    if cells <= 0 or not layers:
        return head
    rows = sum(row_bytes(kv_type, (layer.n_head_kv or 0) * (layer.k_dim or 0))
               + row_bytes(kv_type, (layer.n_head_kv or 0) * (layer.v_dim or 0)) for layer in layers)
    return head + cells * CELL_META + DATA_HEAD + 2 * LAYER_HEAD * len(layers) + cells * rows


@per_model(maxsize=4096)
def seq_state_bytes(model: ModelSpec, kv_type: KVType, tokens: int, streams: int = 1) -> int | None:
    """Rule 5: one slot's whole state with `tokens` in the cache (what a prompt-cache entry holds beside its
    checkpoints); None when a layer's facts are unknown."""
    if any(layer.kind is LayerKind.RECURRENT for layer in model.layers):
        return checkpoint_bytes(model, kv_type, tokens, streams)
    attention = [layer for layer in model.layers if layer.kind in (LayerKind.FULL, LayerKind.SWA)]
    if len(attention) < len(model.layers) or any(layer.n_head_kv is None or layer.k_dim is None or layer.v_dim is None
                                                  for layer in attention):
        return None
    full = [layer for layer in attention if layer.kind is LayerKind.FULL]
    swa = [layer for layer in attention if layer.kind is LayerKind.SWA]
    if not swa:
        return 8 + _cache_part(full, kv_type, tokens, streams)
    if any(layer.window is None for layer in swa):
        return None
    window = max(layer.window or 0 for layer in swa)
    return 8 + _cache_part(full, kv_type, tokens, streams) + _cache_part(swa, kv_type, min(tokens, window), streams)


def partial_state_bytes(model: ModelSpec, kv_type: KVType, tokens: int, streams: int = 1) -> int | None:
    """Rule 4 for a draft beside a target that checkpoints (`create_checkpoint`: `update_dft`): a model without
    sliding-window or recurrent layers writes its whole state (src/llama-kv-cache.cpp `state_write` ignores the
    partial flag), Rule 5's."""
    kinds = kind_counts(model)
    if kinds[LayerKind.SWA] or kinds[LayerKind.RECURRENT]:
        return checkpoint_bytes(model, kv_type, tokens, streams)
    return seq_state_bytes(model, kv_type, tokens, streams)


def checkpoint_memory(model: ModelSpec, kv_type: KVType, prompt_tokens: int, s: CheckpointSettings) -> int | None:
    """Rules 1–4: the bytes of every checkpoint one prompt of `prompt_tokens` leaves in the slot."""
    if not makes_checkpoints(model, s):
        return 0
    sizes = [checkpoint_bytes(model, kv_type, at) for at in checkpoint_positions(prompt_tokens, s)]
    return None if any(b is None for b in sizes) else sum(b for b in sizes if b is not None)
