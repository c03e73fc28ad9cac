"""The compute buffer: ggml's allocator replayed over llama.cpp's graph, checked against llama.cpp itself.

The table's figures are llama.cpp's own `sched_reserve: CPU compute buffer size = X MiB`, measured
with llama-cli of the pinned build (0c1e570, CPU, AVX-512) on complete models of these shapes
(zero weights, 2 blocks, tied Q8_0 embeddings, a SentencePiece vocabulary) written with
tests/gguf_factory.py: `llama-cli -m M -c CTX -t 2 -p 'The capital of France is' -n 2 -st -v EXTRA`.
The buffer does not depend on the block count or the weight types (checked: 2 and 30 blocks of
smollm2's shape, Q8_0 and Q4_1, both 14.01 MiB at ctx 512).
"""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc, MLADesc

from gguf_budget.core.fit.buffers.graph_alloc import Node, buffer_size
from gguf_budget.core.fit.runtime_memory import compute_buffer, graph_settings
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.model.kv import KVType

MiB = 1024 * 1024
FA_OFF = {"flash_attn": False}
Q8 = "q8_0"


def llama(n_embd=576, n_ff=1536, n_head=9, n_head_kv=3, n_vocab=49152):
    return ArchDesc(n_layer=2, n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_head_kv=n_head_kv, n_vocab=n_vocab, tied=True)


GEMMA3 = ArchDesc(arch="gemma3", n_layer=6, n_embd=640, n_ff=2048, n_head=4, n_head_kv=1, head_dim=256, n_vocab=16384,
                  tied=True, qk_norm=True, post_norms=True, sliding_window=512)
QWEN3MOE = ArchDesc(arch="qwen3moe", n_layer=2, n_embd=512, n_ff=1536, n_head=8, n_head_kv=2, head_dim=64, n_vocab=8192,
                    tied=True, qk_norm=True, n_expert=8, n_expert_used=2, expert_ff=256)

# GLM-4.7-Flash's shape (deepseek2, MLA as converted since llama.cpp PR 12801: 20 heads, kv_lora_rank 512, rope 64,
# query-key 256 and value 256 per head, q_lora_rank 768; 64 experts of 1536, 4 used, 1 shared) with 2 blocks and a
# 260-token vocabulary, measured with llama-completion (`-p 'The capital of France is' -n 1`; its graph reserves
# logits for the whole ubatch: outputs 512), as a zero-weight complete file
GLM47_FLASH = ArchDesc(arch="deepseek2", n_layer=2, n_embd=2048, n_ff=10240, n_head=20, n_head_kv=20, n_vocab=260,
                       n_expert=64, n_expert_used=4, n_expert_shared=1, expert_ff=1536, dense_layers=(0,),
                       mla=MLADesc(kv_lora_rank=512, q_lora_rank=768, rope_dim=64, key_length=256, value_length=256,
                                   absorbed=True))
COMPLETION = {"outputs": 512}
# DeepSeek-V2-Lite's shape as older converters wrote it (27 blocks, 16 heads of query-key 192 / value 128 decompressed
# from attn_kv_b, kv_lora_rank 512, rope 64, no Q rank; 64 experts of 1408, 6 used, 2 shared), measured the same way
V2_LITE_LEGACY = ArchDesc(arch="deepseek2", n_layer=27, n_embd=2048, n_ff=10944, n_head=16, n_head_kv=16, n_vocab=260,
                          n_expert=64, n_expert_used=6, n_expert_shared=2, expert_ff=1408, dense_layers=(0,),
                          mla=MLADesc(kv_lora_rank=512, rope_dim=64, key_length=192, value_length=128))

COMPUTE_TABLE = [
    # shape, ctx, KV type, engine settings → llama.cpp's compute buffer (MiB, as printed), tolerance
    (llama(), 512, "f16", {}, "14.01", 0),
    (llama(), 2048, "f16", {}, "15.51", 0),
    (llama(), 512, "f16", FA_OFF, "16.38", 0),
    (llama(), 2048, "f16", FA_OFF, "46.38", 0),
    (llama(), 512, Q8, {}, "12.92", 0),
    (llama(n_ff=768), 512, "f16", {}, "8.01", 0),
    (llama(n_ff=768), 512, Q8, {}, "8.42", 0),
    (llama(n_ff=3072), 512, "f16", FA_OFF, "23.13", 0),
    (llama(n_ff=6144), 2048, "f16", {}, "42.51", 0),
    (llama(n_ff=6144), 512, "f16", FA_OFF, "41.13", 0),
    (llama(n_embd=288), 2048, "f16", FA_OFF, "43.20", 0),
    (llama(n_embd=1152), 512, "f16", FA_OFF, "22.76", 0),
    (llama(n_embd=1152), 512, Q8, {}, "16.34", 0),
    (llama(n_head=3, n_head_kv=1), 2048, "f16", FA_OFF, "22.38", 0),
    (llama(n_head=3, n_head_kv=1), 512, Q8, {}, "12.92", 0),
    (llama(n_head=18, n_head_kv=9), 2048, "f16", FA_OFF, "82.76", 0),
    (llama(n_head=18, n_head_kv=9), 512, Q8, {}, "14.01", 0),       # head size 32: no rotation
    (llama(n_head_kv=9), 512, "f16", FA_OFF, "17.88", 0),
    (llama(n_vocab=131072), 2048, "f16", {}, "15.51", 0),           # one logits row: the vocabulary hardly counts
    (llama(), 2048, "f16", {"ubatch": 128}, "3.88", 0),
    (llama(), 2048, "f16", {"ubatch": 256}, "7.76", 0),
    (llama(), 4096, "f16", {"ubatch": 1024}, "35.02", 0),
    (llama(), 512, "f16", {"outputs": 512}, "98.25", 0),            # llama-completion: every row's logits
    (GEMMA3, 4096, "f16", {}, "22.77", 0),
    (GEMMA3, 4096, "f16", {"swa_full": True}, "25.77", 0),
    (GEMMA3, 2048, Q8, {}, "21.30", 0.015),
    (GEMMA3, 2048, "f16", FA_OFF, "29.26", 0.07),
    (QWEN3MOE, 512, "f16", {}, "6.51", 0),
    (QWEN3MOE, 2048, "f16", {}, "8.01", 0),
    (QWEN3MOE, 2048, "f16", FA_OFF, "41.51", 0),
    (GLM47_FLASH, 4096, "f16", COMPLETION, "86.01", 0),
    (GLM47_FLASH, 4096, "f16", COMPLETION | FA_OFF, "236.51", 0),
    (GLM47_FLASH, 32768, "f16", COMPLETION, "114.01", 0),
    (GLM47_FLASH, 32768, "f16", COMPLETION | FA_OFF, "1412.51", 0),
    (GLM47_FLASH, 4096, Q8, COMPLETION, "86.01", 0),                # K-only input: no Hadamard matrices
    (V2_LITE_LEGACY, 4096, "f16", COMPLETION, "84.14", 0),
    (V2_LITE_LEGACY, 4096, Q8, COMPLETION, "80.17", 0),
    (V2_LITE_LEGACY, 4096, "f16", COMPLETION | FA_OFF, "184.27", 0),
]


@pytest.mark.parametrize("desc, ctx, kv_type, engine, measured, tolerance", COMPUTE_TABLE)
def test_compute_buffer_as_llama_cpp_reserves_it(model, desc, ctx, kv_type, engine, measured, tolerance):
    spec = model(desc)
    whole, _ = compute_buffer(spec, graph_settings(spec, ctx, KVType(kv_type), EngineSettings(**engine)))
    if tolerance:
        assert abs(whole / (float(measured) * MiB) - 1) <= tolerance
    else:
        assert f"{whole / MiB:.2f}" == measured


def node(name: str, nbytes: int, srcs: tuple[str, ...] = (), **flags: bool | str) -> Node:
    """A graph node as the tables write it: name, size and sources in place, the rest by keyword."""
    return Node(name=name, nbytes=nbytes, srcs=srcs, **flags)


ALLOCATOR_TABLE = [
    # nodes → buffer size; sizes round up to 32 bytes
    ([node("a", 100), node("b", 100, ("a",), inplace=True)], 128),            # b reuses a: one 128-byte block
    ([node("a", 100), node("b", 100, ("a",))], 256),                          # not in place: a and b side by side
    ([node("a", 64), node("c", 64, ("a",), inplace=True), node("d", 64, ("a",))], 192),  # d still reads a: no reuse
    ([node("a", 64), node("b", 64, ("a",)), node("c", 32, ("b",))], 128),    # a's hole (0..64) takes c
    ([node("x", 32, is_input=True), node("a", 64), node("b", 64, ("a",)), node("c", 128, ("b", "x"))], 288),
    # x 0..32, a 32..96, b 96..160; a freed: hole 32..96 too small for c → c at 160..288
    ([node("a", 64), node("v", 0, ("a",), view_of="a"), node("b", 64, ("v",), inplace=True)], 128),  # no reuse of views
    ([node("a", 64, is_output=True), node("b", 64, ("a",)), node("c", 64, ("b",))], 192),  # an output is never freed
]


@pytest.mark.parametrize("nodes, size", ALLOCATOR_TABLE)
def test_the_allocator_by_hand(nodes, size):
    assert buffer_size(nodes) == size


def test_freed_neighbours_merge_into_one_hole():
    # a 0..64, b 64..128, c 128..192 (reads a and b); a and b freed → one hole 0..128 takes d (128)
    nodes = [node("a", 64), node("b", 64), node("c", 64, ("a", "b")), node("d", 128, ("c",))]
    assert buffer_size(nodes) == 192
