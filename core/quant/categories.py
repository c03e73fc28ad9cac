"""Which tensors llama.cpp's quantizer may touch, and the broad category its rules see.

Source: ggml-org/llama.cpp src/llama-quant.cpp at 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714
(`tensor_get_category`, `category_is_attn_v`, `tensor_allows_quantization`).

Rule 1: a tensor keeps its source type unless it has at least 2 dimensions, its name ends in
        "weight", and it matches no row of `KEEP_WHEN_CONTAINS` / `KEEP_WHEN_NAMED` (norms,
        router gates, positional embeddings, convolution kernels, small RWKV weights…).
Rule 2: the category is the first row of `CATEGORY_RULES` the name matches — exact names for
        the output and embedding tables, substrings for the rest, in llama.cpp's order
        (so `attn_qkv` is found before `attn_v`, `ffn_up` before `ffn_gate`).
Rule 3: attn_v, attn_qkv and attn_kv_b are "attention-V-like": one counter and one rule set.
"""

from __future__ import annotations

from gguf_budget.core.vocab import TextEnum


class Category(TextEnum):
    TOKEN_EMBD = "token_embd"
    ATTENTION_Q = "attn_q"
    ATTENTION_V = "attn_v"
    ATTENTION_K = "attn_k"
    ATTENTION_QKV = "attn_qkv"
    ATTENTION_KV_B = "attn_kv_b"
    ATTENTION_OUTPUT = "attn_output"
    FFN_UP = "ffn_up"
    FFN_GATE = "ffn_gate"
    FFN_DOWN = "ffn_down"
    OUTPUT = "output"
    OTHER = "other"


C = Category
EXACT, CONTAINS = "exact", "contains"
CATEGORY_RULES: tuple[tuple[Category, str, str], ...] = (
    (C.OUTPUT, EXACT, "output.weight"),
    (C.TOKEN_EMBD, EXACT, "token_embd.weight"),
    (C.TOKEN_EMBD, EXACT, "per_layer_token_embd.weight"),
    (C.ATTENTION_QKV, CONTAINS, "attn_qkv.weight"),
    (C.ATTENTION_KV_B, CONTAINS, "attn_kv_b.weight"),
    (C.ATTENTION_V, CONTAINS, "attn_v.weight"),
    (C.ATTENTION_K, CONTAINS, "attn_k.weight"),
    (C.ATTENTION_Q, CONTAINS, "attn_q.weight"),
    (C.ATTENTION_OUTPUT, CONTAINS, "attn_output.weight"),
    (C.FFN_UP, CONTAINS, "ffn_up"),
    (C.FFN_GATE, CONTAINS, "ffn_gate"),
    (C.FFN_DOWN, CONTAINS, "ffn_down"),
)
ATTN_V_LIKE = frozenset({C.ATTENTION_V, C.ATTENTION_QKV, C.ATTENTION_KV_B})

KEEP_WHEN_CONTAINS: tuple[str, ...] = (
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
    "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
    "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
    "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
    "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
    "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
)
KEEP_WHEN_NAMED = frozenset({"position_embd.weight", "token_types.weight"})


def tensor_category(name: str) -> Category:
    """Rule 2."""
    for category, how, text in CATEGORY_RULES:
        if (name == text) if how == EXACT else (text in name):
            return category
    return C.OTHER


def n_dims(shape: tuple[int, ...]) -> int:
    """ggml_n_dims: trailing dimensions of 1 do not count."""
    dims = len(shape)
    while dims > 1 and shape[dims - 1] == 1:
        dims -= 1
    return dims


def allows_quantization(name: str, shape: tuple[int, ...]) -> bool:
    """Rule 1."""
    if n_dims(shape) < 2 or not name.endswith("weight") or name in KEEP_WHEN_NAMED:
        return False
    return not any(text in name for text in KEEP_WHEN_CONTAINS)
