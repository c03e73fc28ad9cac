"""The header's counts checked as a whole, before any work anywhere is sized by one of them.

A header is a few bytes anyone can edit: `expert_used_count` raised from 8 to 2^31 − 1 in a
4-byte edit made `fit` build a graph node per used expert until it was killed for memory. So
every count a fact is built from is checked here, against the others and against the tensor
directory, and a header that breaks a relation is refused with a `GGUFFormatError` naming the
key (at its byte offset) — llama.cpp refuses the same headers when it loads them.

Rule 1: every count is a number llama.cpp can hold: its hyper-parameters are `uint32_t`
        (`src/llama-hparams.h`), so a count above 2^32 − 1 is not a model llama.cpp runs.
Rule 2: `block_count ≤ 512` (`LLAMA_MAX_LAYERS`; `llama_model_loader::get_key_or_arr` throws
        "n > N_MAX"), and at most the blocks the tensor directory has; per-layer arrays have one
        entry per block (`Metadata.counts_per_layer`, as `get_key_or_arr`'s "wrong array length").
Rule 3: experts, as `llama_model::load_hparams` asserts: `expert_count ≤ 1024`
        (`LLAMA_MAX_EXPERTS`), `expert_used_count ≤ expert_count`, a router with experts routes
        at least one and no experts route none; `expert_shared_count ≤ 1024`; and the expert
        tensors (`blk.N.ffn_*_exps`, ggml shape [.., .., n_expert]) hold `expert_count` experts,
        as `create_tensor` checks their shape.
Rule 4: heads divide what they share: in each layer with both, `head_count_kv` divides
        `head_count` (grouped-query attention: `n_gqa = n_head / n_head_kv`), a layer never has
        KV heads without query heads, and where a head size is not given it is
        `embedding_length / head_count`, which must then divide exactly.
Rule 5: `embedding_length` is the row width of `token_embd.weight` (ggml shape [n_embd, n_vocab]),
        as `create_tensor` checks it.
"""

from __future__ import annotations

from typing import Sequence

from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf.metadata import Metadata
from gguf_budget.core.model.spec import ModelTensor

UINT32_MAX = (1 << 32) - 1
MAX_LAYERS = 512
"""llama.cpp's `LLAMA_MAX_LAYERS` (src/llama-hparams.h)."""
MAX_EXPERTS = 1024
"""llama.cpp's `LLAMA_MAX_EXPERTS` (src/llama-hparams.h)."""

SCALAR_COUNTS = (
    Keys.LLM.CONTEXT_LENGTH, Keys.LLM.EMBEDDING_LENGTH, Keys.LLM.BLOCK_COUNT, Keys.LLM.VOCAB_SIZE,
    Keys.LLM.EXPERT_COUNT, Keys.LLM.EXPERT_USED_COUNT, Keys.LLM.EXPERT_SHARED_COUNT,
    Keys.LLM.FULL_ATTENTION_INTERVAL, Keys.LLM.TOKEN_SHIFT_COUNT,
    Keys.Attention.KEY_LENGTH, Keys.Attention.VALUE_LENGTH, Keys.Attention.SLIDING_WINDOW,
    Keys.Attention.KV_LORA_RANK, Keys.Attention.Q_LORA_RANK, Keys.Rope.DIMENSION_COUNT,
    Keys.SSM.CONV_KERNEL, Keys.SSM.INNER_SIZE, Keys.SSM.STATE_SIZE, Keys.SSM.TIME_STEP_RANK,
    Keys.SSM.GROUP_COUNT, Keys.WKV.HEAD_SIZE, Keys.ShortConv.L_CACHE,
)
"""The `{arch}.*` counts the facts read as one number."""
PER_LAYER_COUNTS = (Keys.LLM.FEED_FORWARD_LENGTH, Keys.Attention.HEAD_COUNT, Keys.Attention.HEAD_COUNT_KV)
"""The `{arch}.*` counts that may be one number or one per layer."""
EXPERT_TENSORS = ("ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight")


class _Keys:
    """`{arch}.*` keys of one header, read through `Metadata`'s typed accessors."""

    def __init__(self, meta: Metadata, arch: str):
        self.meta, self.arch = meta, arch

    def name(self, key: str) -> str:
        return key.format(arch=self.arch)

    def error(self, key: str, message: str) -> GGUFFormatError:
        return self.meta.error(self.name(key), message)

    def count(self, key: str) -> int | None:
        return self.meta.count(self.name(key))

    def per_layer(self, key: str, n_layer: int) -> tuple[int, ...] | None:
        return self.meta.counts_per_layer(self.name(key), n_layer)


def check_counts(meta: Metadata, arch: str, n_blocks: int, tensors: Sequence[ModelTensor]) -> None:
    """Raise a `GGUFFormatError` naming the key of the first relation the header breaks (Rules 1–5).

    `n_blocks` is how many blocks the tensor directory has (`blk.N.*`)."""
    keys = _Keys(meta, arch)
    for key in SCALAR_COUNTS:
        _fits_uint32(keys, key, keys.count(key))
    n_layer = keys.count(Keys.LLM.BLOCK_COUNT) or 0
    _check_layers(keys, n_layer, n_blocks)
    for key in PER_LAYER_COUNTS:
        for value in set(keys.per_layer(key, n_layer) or ()):
            _fits_uint32(keys, key, value)
    _check_experts(keys, tensors)
    _check_heads(keys, n_layer)
    _check_embedding(keys, tensors)


def _fits_uint32(keys: _Keys, key: str, value: int | None) -> None:
    if value is not None and value > UINT32_MAX:
        raise keys.error(key, f"is {value}, more than llama.cpp can hold (at most {UINT32_MAX})")


def _check_layers(keys: _Keys, n_layer: int, n_blocks: int) -> None:
    if n_layer > MAX_LAYERS:
        raise keys.error(Keys.LLM.BLOCK_COUNT, f"is {n_layer}; llama.cpp loads at most {MAX_LAYERS} layers")
    if n_layer > n_blocks:
        raise keys.error(Keys.LLM.BLOCK_COUNT, f"is {n_layer} but the tensor directory has {n_blocks} blocks")


def _check_experts(keys: _Keys, tensors: Sequence[ModelTensor]) -> None:
    n_expert = keys.count(Keys.LLM.EXPERT_COUNT) or 0
    used = keys.count(Keys.LLM.EXPERT_USED_COUNT) or 0
    shared = keys.count(Keys.LLM.EXPERT_SHARED_COUNT) or 0
    if n_expert > MAX_EXPERTS:
        raise keys.error(Keys.LLM.EXPERT_COUNT, f"is {n_expert}; llama.cpp allows at most {MAX_EXPERTS} experts")
    if used > n_expert:
        raise keys.error(Keys.LLM.EXPERT_USED_COUNT, f"is {used}, more than the {n_expert} experts "
                                                     f"({keys.name(Keys.LLM.EXPERT_COUNT)})")
    if n_expert and not used:
        raise keys.error(Keys.LLM.EXPERT_USED_COUNT, f"must route at least one of the {n_expert} experts")
    if shared > MAX_EXPERTS:
        raise keys.error(Keys.LLM.EXPERT_SHARED_COUNT, f"is {shared}; llama.cpp allows at most {MAX_EXPERTS} experts")
    for t in tensors:
        if t.layer is not None and t.name.endswith(EXPERT_TENSORS) and len(t.shape) == 3 and t.shape[2] != n_expert:
            raise keys.error(Keys.LLM.EXPERT_COUNT, f"is {n_expert} but {t.name} holds {t.shape[2]} experts")


def _check_heads(keys: _Keys, n_layer: int) -> None:
    n_head = keys.per_layer(Keys.Attention.HEAD_COUNT, n_layer)
    n_head_kv = keys.per_layer(Keys.Attention.HEAD_COUNT_KV, n_layer)
    if n_head is None:
        return
    for il, (heads, kv) in enumerate(zip(n_head, n_head_kv or n_head, strict=True)):
        if kv and not heads:
            raise keys.error(Keys.Attention.HEAD_COUNT_KV, f"gives layer {il} {kv} KV heads but it has no heads")
        if kv and heads % kv:
            raise keys.error(Keys.Attention.HEAD_COUNT_KV, f"is {kv} in layer {il}, which does not divide its "
                                                           f"{heads} heads")
    widest = max(n_head, default=0)
    n_embd = keys.count(Keys.LLM.EMBEDDING_LENGTH)
    defaulted = keys.count(Keys.Attention.KEY_LENGTH) is None or keys.count(Keys.Attention.VALUE_LENGTH) is None
    if defaulted and widest and n_embd is not None and n_embd % widest:
        raise keys.error(Keys.Attention.HEAD_COUNT, f"is {widest}, which does not divide the embedding length "
                                                    f"{n_embd} (and no head size is given)")


def _check_embedding(keys: _Keys, tensors: Sequence[ModelTensor]) -> None:
    n_embd = keys.count(Keys.LLM.EMBEDDING_LENGTH)
    embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
    if n_embd is not None and embd is not None and len(embd.shape) == 2 and embd.shape[0] != n_embd:
        raise keys.error(Keys.LLM.EMBEDDING_LENGTH, f"is {n_embd} but token_embd.weight has rows of {embd.shape[0]}")
