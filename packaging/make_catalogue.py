"""Regenerate the offline model catalogue in `resources/catalogue/` (header-only skeletons).

Each skeleton is built in two steps, so its tensor types are llama.cpp's and not ours:
1. the model's shape from its published `config.json` (numbers below, cited per model), every
   weight in BF16 as the published checkpoint holds it (norms, router gates, sinks, biases and
   convolution kernels in F32, as llama.cpp's converter writes them);
2. that shape re-priced to the entry's file type by `gguf_budget.core.quant.mix.quant_mix` — the
   table of llama.cpp's `llama_tensor_get_type` (`src/llama-quant.cpp`) — exactly as
   `llama-quantize` would choose each tensor's type.
No weights and no token lists are written (the vocabulary size follows from `token_embd`).
Which published file each skeleton stands for, and its size, come from `core/model/catalogue.py`.

Run: python packaging/make_catalogue.py [OUT_DIR]   (default: resources/catalogue)
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402

from gguf_budget.core import load_model  # noqa: E402
from gguf_budget.core.model.catalogue import (  # noqa: E402
    CATALOGUE, CATALOGUE_FOLDER, CONFIG_SOURCE_KEY, PUBLISHED_BYTES_KEY, PUBLISHED_SOURCE_KEY, CatalogueEntry,
)
from gguf_budget.core.quant.file_types import find_file_type  # noqa: E402
from gguf_budget.core.quant.mix import quant_mix  # noqa: E402
from gguf_factory import ArchDesc, MLADesc, SSMDesc, write_gguf  # noqa: E402

BF16 = T.BF16


def _llama(n_layer: int, n_embd: int, n_ff: int, n_head: int, tied: bool) -> ArchDesc:
    """meta-llama Llama 3.x: 8 KV heads, 128k vocabulary, 131072 context, rope_freqs table."""
    return ArchDesc(arch="llama", n_layer=n_layer, n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_head_kv=8,
                    n_vocab=128256, context_length=131072, tied=tied, rope_freqs=n_embd // n_head // 2,
                    weight_type=BF16)


def _qwen3(n_layer: int, n_embd: int, n_ff: int, n_head: int) -> ArchDesc:
    """Qwen3 dense: 8 KV heads of 128, q/k norms, 151936 vocabulary, 40960 context, untied."""
    return ArchDesc(arch="qwen3", n_layer=n_layer, n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_head_kv=8,
                    head_dim=128, n_vocab=151936, context_length=40960, qk_norm=True, weight_type=BF16)


def _gemma3(n_layer: int, n_embd: int, n_ff: int, n_head: int, n_head_kv: int, head_dim: int) -> ArchDesc:
    """Gemma 3: 262208 vocabulary, 131072 context, window 1024 on 5 of 6 layers, tied embeddings."""
    return ArchDesc(arch="gemma3", n_layer=n_layer, n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_head_kv=n_head_kv,
                    head_dim=head_dim, n_vocab=262208, context_length=131072, tied=True, qk_norm=True,
                    post_norms=True, sliding_window=1024, weight_type=BF16)


def _except(n_layer: int, layers: Sequence[int]) -> tuple[int, ...]:
    return tuple(il for il in range(n_layer) if il not in layers)


LFM2_ATTENTION = (2, 5, 8, 10, 12, 14)
GRANITE_ATTENTION = (5, 15, 25, 35)

SHAPES: Mapping[str, ArchDesc] = {
    # meta-llama/Llama-3.2-1B-Instruct config.json: 16 layers, hidden 2048, intermediate 8192,
    # 32 heads, 8 KV heads, head_dim 64, vocab 128256, 131072 positions, tie_word_embeddings true.
    "llama-3.2-1b-instruct": _llama(16, 2048, 8192, 32, tied=True),
    # meta-llama/Llama-3.1-8B-Instruct config.json: 32 layers, hidden 4096, intermediate 14336, 32 heads.
    "llama-3.1-8b-instruct": _llama(32, 4096, 14336, 32, tied=False),
    # meta-llama/Llama-3.1-70B-Instruct config.json: 80 layers, hidden 8192, intermediate 28672, 64 heads.
    "llama-3.1-70b-instruct": _llama(80, 8192, 28672, 64, tied=False),
    # Qwen/Qwen2.5-3B-Instruct config.json: 36 layers, hidden 2048, intermediate 11008, 16 heads,
    # 2 KV heads, q/k/v biases, vocab 151936, 32768 positions, tie_word_embeddings true.
    "qwen2.5-3b-instruct": ArchDesc(
        arch="qwen2", n_layer=36, n_embd=2048, n_ff=11008, n_head=16, n_head_kv=2, n_vocab=151936,
        context_length=32768, tied=True, attn_bias=("attn_q", "attn_k", "attn_v"), weight_type=BF16,
    ),
    # Qwen/Qwen3-8B config.json: 36 layers, hidden 4096, intermediate 12288, 32 heads.
    "qwen3-8b": _qwen3(36, 4096, 12288, 32),
    # Qwen/Qwen3-14B config.json: 40 layers, hidden 5120, intermediate 17408, 40 heads.
    "qwen3-14b": _qwen3(40, 5120, 17408, 40),
    # Qwen/Qwen3-32B config.json: 64 layers, hidden 5120, intermediate 25600, 64 heads.
    "qwen3-32b": _qwen3(64, 5120, 25600, 64),
    # Qwen/Qwen3-30B-A3B-Instruct-2507 config.json: 48 layers, hidden 2048, 32 heads, 4 KV heads,
    # head_dim 128, 128 experts (8 used), moe_intermediate 768, vocab 151936, 262144 positions, untied.
    "qwen3-30b-a3b-instruct-2507": ArchDesc(
        arch="qwen3moe", n_layer=48, n_embd=2048, n_ff=6144, n_head=32, n_head_kv=4, head_dim=128,
        n_vocab=151936, context_length=262144, qk_norm=True, n_expert=128, n_expert_used=8, expert_ff=768,
        weight_type=BF16,
    ),
    # mistralai/Mistral-Small-3.2-24B-Instruct-2506 config.json (text_config): 40 layers, hidden 5120,
    # intermediate 32768, 32 heads, 8 KV heads, head_dim 128, vocab 131072, 131072 positions, untied.
    "mistral-small-3.2-24b-instruct-2506": ArchDesc(
        arch="llama", n_layer=40, n_embd=5120, n_ff=32768, n_head=32, n_head_kv=8, head_dim=128,
        n_vocab=131072, context_length=131072, weight_type=BF16,
    ),
    # google/gemma-3-4b-it config.json (text_config): 34 layers, hidden 2560, intermediate 10240,
    # 8 heads, 4 KV heads, head_dim 256 (window and period as `_gemma3`).
    "gemma-3-4b-it": _gemma3(34, 2560, 10240, 8, 4, 256),
    # google/gemma-3-12b-it config.json (text_config): 48 layers, hidden 3840, intermediate 15360,
    # 16 heads, 8 KV heads, head_dim 256.
    "gemma-3-12b-it": _gemma3(48, 3840, 15360, 16, 8, 256),
    # google/gemma-3-27b-it config.json (text_config): 62 layers, hidden 5376, intermediate 21504,
    # 32 heads, 16 KV heads, head_dim 128.
    "gemma-3-27b-it": _gemma3(62, 5376, 21504, 32, 16, 128),
    # microsoft/phi-4 config.json: 40 layers, hidden 5120, intermediate 17920, 40 heads, 10 KV
    # heads, vocab 100352, 16384 positions, untied; llama.cpp's phi3 layout fuses q|k|v into
    # attn_qkv and gate|up into ffn_up.
    "phi-4": ArchDesc(
        arch="phi3", n_layer=40, n_embd=5120, n_ff=17920, n_head=40, n_head_kv=10, n_vocab=100352,
        context_length=16384, fused_qkv_up=True, weight_type=BF16,
    ),
    # openai/gpt-oss-20b config.json: 24 layers, hidden 2880, 64 heads, 8 KV heads, head_dim 64,
    # 32 experts (4 used) of intermediate 2880, vocab 201088, 131072 positions, sliding_window 128
    # on alternate layers (sliding first), attention sinks and biases, expert biases, untied;
    # the published checkpoint's experts are MXFP4 already.
    "gpt-oss-20b": ArchDesc(
        arch="gpt-oss", n_layer=24, n_embd=2880, n_ff=2880, n_head=64, n_head_kv=8, head_dim=64,
        n_vocab=201088, context_length=131072, sliding_window=128, n_expert=32, n_expert_used=4,
        expert_ff=2880, attn_bias=("attn_q", "attn_k", "attn_v", "attn_output"), attn_sinks=True,
        expert_bias=True, ffn_norm="post_attention_norm", weight_type=BF16,
    ),
    # deepseek-ai/DeepSeek-V2-Lite config.json: 27 layers, hidden 2048, intermediate 10944 (layer
    # 0 dense: first_k_dense_replace 1), 16 heads, MLA (kv_lora_rank 512, no q_lora, qk_nope 128,
    # qk_rope 64, v_head 128), 64 routed experts (6 used) of 1408 and 2 shared, vocab 102400,
    # 163840 positions, untied.
    "deepseek-v2-lite": ArchDesc(
        arch="deepseek2", n_layer=27, n_embd=2048, n_ff=10944, n_head=16, n_head_kv=16, n_vocab=102400,
        context_length=163840, n_expert=64, n_expert_used=6, expert_ff=1408, n_expert_shared=2,
        dense_layers=(0,), mla=MLADesc(kv_lora_rank=512, q_lora_rank=0, rope_dim=64, key_length=192,
                                       value_length=128), weight_type=BF16,
    ),
    # ibm-granite/granite-4.0-h-tiny config.json: 40 layers, hidden 1536, attention on layers
    # 5, 15, 25, 35 (12 heads, 4 KV heads of 128), Mamba-2 elsewhere (48 heads of 64, d_state 128,
    # 1 group, d_conv 4, expand 2), 64 experts (6 used) of 512 plus a shared 1024, vocab 100352,
    # 1048576 positions in the published GGUF, tied embeddings.
    "granite-4.0-h-tiny": ArchDesc(
        arch="granitehybrid", n_layer=40, n_embd=1536, n_ff=512, n_head=12,
        n_head_kv=tuple(4 if il in GRANITE_ATTENTION else 0 for il in range(40)), head_dim=128,
        n_vocab=100352, context_length=1048576, tied=True, n_expert=64, n_expert_used=6, expert_ff=512,
        shared_ff=1024, ssm=SSMDesc(d_conv=4, d_inner=3072, d_state=128, dt_rank=48, n_group=1, mamba2=True),
        recurrent_layers=_except(40, GRANITE_ATTENTION), weight_type=BF16,
    ),
    # LiquidAI/LFM2-1.2B config.json: 16 layers, hidden 2048, block_ff_dim 12288 auto-adjusted to
    # 8192, 32 heads, 8 KV heads, full attention on layers 2,5,8,10,12,14, short convolutions
    # (conv_L_cache 3) elsewhere, vocab 65536, 128000 positions, tied embeddings.
    "lfm2-1.2b": ArchDesc(
        arch="lfm2", n_layer=16, n_embd=2048, n_ff=8192, n_head=32,
        n_head_kv=tuple(8 if il in LFM2_ATTENTION else 0 for il in range(16)),
        n_vocab=65536, context_length=128000, tied=True, qk_norm=True, shortconv=3,
        recurrent_layers=_except(16, LFM2_ATTENTION), final_norm="token_embd_norm", weight_type=BF16,
    ),
    # meta-llama/Llama-4-Scout-17B-16E-Instruct config.json (text_config): 48 layers, hidden 5120,
    # 40 heads, 8 KV heads, head_dim 128, 16 experts (1 used) of 8192 plus a shared one,
    # intermediate_size_mlp 16384, interleave_moe_layer_step 1 (every layer MoE), vocab 202048,
    # 10485760 positions, untied; llama.cpp runs 3 of every 4 layers with 8192-token chunked attention.
    "llama-4-scout-17b-16e-instruct": ArchDesc(
        arch="llama4", n_layer=48, n_embd=5120, n_ff=16384, n_head=40, n_head_kv=8, head_dim=128,
        n_vocab=202048, context_length=10485760, n_expert=16, n_expert_used=1, expert_ff=8192,
        n_expert_shared=1, weight_type=BF16,
    ),
}


def _source(name: str) -> ArchDesc:
    return replace(SHAPES[name], name=f"{name} (BF16 shape)", file_type=32)


def _types(shape: ArchDesc, quant: str) -> dict[str, T]:
    """Step 2: the types llama-quantize picks for `quant`, read off a BF16 skeleton of the shape."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_gguf(Path(tmp) / "source.gguf", shape, mode="header_only")[0]
        mix = quant_mix(load_model(path), find_file_type(quant))
    return {t.name: t.ggml_type for t in mix.tensors}


def skeleton(entry: CatalogueEntry) -> ArchDesc:
    """The entry's shape with llama.cpp's types for its quantization, its labels and its cited size."""
    source = _source(entry.name)
    return replace(
        source,
        name=f"{entry.title} {entry.quant} (skeleton, header only)",
        file_type=int(find_file_type(entry.quant).llama_ftype),
        tensor_types=_types(source, entry.quant),
        string_kv={
            "general.description": entry.description,
            "general.source.url": f"https://huggingface.co/{entry.config_repo}",
            PUBLISHED_SOURCE_KEY: entry.published_source,
            CONFIG_SOURCE_KEY: entry.config_source,
        },
        uint64_kv={PUBLISHED_BYTES_KEY: entry.published_file_bytes},
    )


def write_catalogue(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [write_gguf(out_dir / e.file, skeleton(e), mode="header_only")[0] for e in CATALOGUE]


def main(argv: Sequence[str]) -> None:
    out_dir = Path(argv[0]) if argv else ROOT / "resources" / CATALOGUE_FOLDER
    for path in write_catalogue(out_dir):
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1:])
