"""A tiny GGUF that llama.cpp can really load and run: a 2-layer llama with a 260-token SentencePiece vocabulary.

Weights are zeros (every logit ties, so any token is a valid answer); what matters is that
llama.cpp accepts the file, allocates its buffers and decodes a few tokens, quickly.

Rule 1: the vocabulary is what llama.cpp's SPM loader needs: <unk>, <s>, </s>, the 256 byte
        tokens `<0x00>`…`<0xFF>` (byte fallback, and the line feed it looks up) and `▁`.
Rule 2: heads of 32 dimensions, so a q8_0 or q4_0 KV cache (blocks of 32) is allowed.
Rule 3: everything else comes from `gguf_factory.ArchDesc`, so the planner sees the same shape; a deepseek2 (MLA)
        of the same vocabulary in either file format (`runnable_mla_desc`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, MLADesc, write_gguf

NORMAL, UNKNOWN, CONTROL, UNUSED, BYTE = 1, 2, 3, 5, 6
_SPECIALS = (("<unk>", UNKNOWN), ("<s>", CONTROL), ("</s>", CONTROL))
_PIECES = (("▁", NORMAL),)


def _vocabulary() -> tuple[list[str], list[int]]:
    entries = [*_SPECIALS, *((f"<0x{b:02X}>", BYTE) for b in range(256)), *_PIECES]
    return [text for text, _ in entries], [kind for _, kind in entries]


def runnable_desc(n_layer: int = 2, context_length: int = 4096) -> ArchDesc:
    tokens, kinds = _vocabulary()
    return ArchDesc(
        name="tiny-runnable-llama", n_layer=n_layer, n_embd=128, n_ff=256, n_head=4, n_head_kv=2,
        n_vocab=len(tokens), context_length=context_length,
        extra_kv={
            "tokenizer.ggml.model": "llama",
            "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.scores": [0.0] * len(tokens),
            "tokenizer.ggml.token_type": kinds,
            "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2,
            "tokenizer.ggml.unknown_token_id": 0,
        },
    )


def runnable_mla_desc(absorbed: bool) -> ArchDesc:
    """A 2-layer deepseek2 (MLA: kv_lora_rank 128, rope 32, 4 heads of query-key 96 / value 64, q_lora_rank 64, one
    dense block then 4 experts, 2 used, 1 shared) with Rule 1's vocabulary, in the current converter's format
    (`absorbed`) or the older one; llama.cpp needs q_lora_rank and the expert keys for a deepseek2 of this depth
    (src/models/deepseek2.cpp `load_arch_hparams`)."""
    base = runnable_desc()
    return replace(base, arch="deepseek2", name=f"tiny-runnable-deepseek2{'' if absorbed else '-legacy'}", n_embd=256,
                   n_ff=512, n_head=4, n_head_kv=4, n_expert=4, n_expert_used=2, n_expert_shared=1, expert_ff=128,
                   dense_layers=(0,), mla=MLADesc(kv_lora_rank=128, q_lora_rank=64, rope_dim=32, key_length=96,
                                                  value_length=64, absorbed=absorbed),
                   extra_kv={**base.extra_kv, "deepseek2.expert_weights_scale": 1.0})


def write_runnable_model(path: str | Path, n_layer: int = 2) -> Path:
    """Write the model (complete: every weight present) and return its path."""
    return write_gguf(path, runnable_desc(n_layer))[0]


LLAMA31_8B_VOCAB = 128_256


def llama31_8b_desc() -> ArchDesc:
    """Llama-3.1-8B's shape (32 blocks of 4096, FFN 14336, 32 heads / 8 KV heads, rope_freqs, 128,256
    tokens) with Rule 1's vocabulary padded by unused pieces to that size; types as written (F16)."""
    tokens, kinds = _vocabulary()
    pad = LLAMA31_8B_VOCAB - len(tokens)
    tokens += [f"<unused{i}>" for i in range(pad)]
    kinds += [UNUSED] * pad
    base = runnable_desc()
    return replace(base, name="Llama-3.1-8B-shaped (zero weights)", n_layer=32, n_embd=4096, n_ff=14336, n_head=32,
                   n_head_kv=8, n_vocab=LLAMA31_8B_VOCAB, context_length=131072, rope_freqs=64,
                   weight_type=T.F16, file_type=1,
                   extra_kv={**base.extra_kv, "tokenizer.ggml.tokens": tokens,
                             "tokenizer.ggml.scores": [0.0] * len(tokens), "tokenizer.ggml.token_type": kinds})


def llama32_3b_desc() -> ArchDesc:
    """Llama-3.2-3B's shape (28 blocks of 3072, FFN 8192, 24 heads / 8 KV heads, tied output, 128,256 tokens): a
    mid-size model between the two small real ones and the 8B, for a calibration that is not decided by one model."""
    return replace(llama31_8b_desc(), name="Llama-3.2-3B-shaped (zero weights)", n_layer=28, n_embd=3072, n_ff=8192,
                   n_head=24, tied=True)


def write_llama31_8b_q4_k_m(path: str | Path) -> Path:
    """A zero-weight sparse Llama-3.1-8B-shaped Q4_K_M that llama.cpp loads and runs (4.58 GiB of
    tensors, no disk used): the types llama-quantize gives each tensor (`core.quant.mix`)."""
    return write_zero_q4_k_m(path, llama31_8b_desc())


def write_zero_q4_k_m(path: str | Path, desc: ArchDesc) -> Path:
    """A zero-weight sparse Q4_K_M of `desc`'s shape: the types llama-quantize gives each tensor (`core.quant.mix`)."""
    from gguf_budget.core.model.loader import load_model
    from gguf_budget.core.quant.file_types import find_file_type
    from gguf_budget.core.quant.mix import quant_mix

    path = Path(path)
    spec = load_model(write_gguf(path, desc, "header_only")[0])
    mix = quant_mix(spec, find_file_type("Q4_K_M"), imatrix=False)
    q4 = replace(desc, file_type=15, tensor_types={t.name: t.ggml_type for t in mix.tensors})
    return write_gguf(path, q4, "sparse")[0]


def _padded_vocabulary(size: int) -> dict[str, object]:
    """Rule 1's vocabulary padded with unused pieces to `size` tokens (a real-sized output layer and logits)."""
    tokens, kinds = _vocabulary()
    pad = size - len(tokens)
    return {"tokenizer.ggml.tokens": tokens + [f"<unused{i}>" for i in range(pad)],
            "tokenizer.ggml.scores": [0.0] * size, "tokenizer.ggml.token_type": kinds + [UNUSED] * pad}


def multi_device_descs() -> dict[str, ArchDesc]:
    """Two shapes for the multi-device runs (tests/data/llamacpp-rpc): big enough that every buffer prints in MiB.

    `mid8`: 8 blocks of 1024, GQA (16 heads / 4 KV heads of 64), FFN 2816, a 32,000-token vocabulary, Q8_0,
    untied. `tied12`: 12 blocks of 512, 8 heads / 8 KV heads, FFN 1536, 8,192 tokens, F16, tied embeddings."""
    base = runnable_desc()
    return {
        "mid8": replace(base, name="mid8 (zero weights)", n_layer=8, n_embd=1024, n_ff=2816, n_head=16, n_head_kv=4,
                        n_vocab=32_000, extra_kv={**base.extra_kv, **_padded_vocabulary(32_000)}),
        "tied12": replace(base, name="tied12 (zero weights)", n_layer=12, n_embd=512, n_ff=1536, n_head=8,
                          n_head_kv=8, n_vocab=8192, tied=True, weight_type=T.F16, file_type=1,
                          extra_kv={**base.extra_kv, **_padded_vocabulary(8192)}),
    }
