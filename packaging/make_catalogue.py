"""Regenerate the offline model catalogue in `resources/catalogue/` (header-only skeletons).

Each skeleton is built from its model's published `config.json` (numbers below, cited per
model) with the tensor types llama.cpp's quantizer picks for Q4_K_M (`src/llama-quant.cpp`,
`llama_tensor_get_type_impl`):
- Q4_K by default; `output` Q6_K; `token_embd` Q4_K, or Q6_K when the model has no
  `output` tensor (tied embeddings: the table serves as the output layer);
- `attn_v` Q6_K on the attention layers `use_more_bits(i, n_attention_layers)` picks, and
  `ffn_down` (routed experts included) Q6_K on the blocks `use_more_bits(il, n_layer)` picks;
- 70B-class llama (`LLM_TYPE_70B`): the other `attn_v` tensors Q5_K instead of Q4_K;
- norms, `ffn_gate_inp`, `rope_freqs` and short-conv kernels stay F32.
No weights and no token lists are written (the vocabulary size follows from `token_embd`).
Which published file each skeleton stands for, and its size, come from `core/catalogue.py`.

Run: python packaging/make_catalogue.py [OUT_DIR]   (default: resources/catalogue)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "packaging"))

from dataclasses import replace  # noqa: E402

from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf.constants import LlamaFileType  # noqa: E402

from gguf_budget.core.model.catalogue import (  # noqa: E402
    CATALOGUE, CATALOGUE_FOLDER, CONFIG_SOURCE_KEY, PUBLISHED_BYTES_KEY, PUBLISHED_SOURCE_KEY, CatalogueEntry,
)
from gguf_factory import ArchDesc, write_gguf  # noqa: E402
from make_demo_model import use_more_bits  # noqa: E402

Q4_K_M = int(LlamaFileType.MOSTLY_Q4_K_M)
LayerMix = dict[int, dict[str, T]]


def q4_k_m_mix(n_layer: int, attention_layers: Sequence[int] | None = None, down: str = "ffn_down",
               other_v: T | None = None) -> LayerMix:
    """Per-block overrides of the Q4_K default, as llama.cpp's Q4_K_M rules place them."""
    attn = list(range(n_layer)) if attention_layers is None else list(attention_layers)
    mix: LayerMix = {il: {} for il in range(n_layer)}
    for i, il in enumerate(attn):
        if use_more_bits(i, len(attn)):
            mix[il]["attn_v"] = T.Q6_K
        elif other_v is not None:
            mix[il]["attn_v"] = other_v
    for il in range(n_layer):
        if use_more_bits(il, n_layer):
            mix[il][down] = T.Q6_K
    return mix


def _llama(n_layer: int, n_embd: int, n_ff: int, n_head: int, tied: bool, other_v: T | None = None) -> ArchDesc:
    """meta-llama Llama 3.x: 8 KV heads, 128k vocabulary, 131072 context, rope_freqs table."""
    return ArchDesc(
        arch="llama", n_layer=n_layer, n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_head_kv=8,
        n_vocab=128256, context_length=131072, tied=tied, rope_freqs=n_embd // n_head // 2,
        weight_type=T.Q4_K, embd_type=T.Q6_K if tied else T.Q4_K, output_type=T.Q6_K,
        layer_mix=q4_k_m_mix(n_layer, other_v=other_v),
    )


LFM2_ATTENTION = (2, 5, 8, 10, 12, 14)

SHAPES: Mapping[str, ArchDesc] = {
    # meta-llama/Llama-3.2-1B-Instruct config.json: 16 layers, hidden 2048, intermediate 8192,
    # 32 heads, 8 KV heads, head_dim 64, vocab 128256, 131072 positions, tie_word_embeddings true.
    "llama-3.2-1b-instruct": _llama(16, 2048, 8192, 32, tied=True),
    # meta-llama/Llama-3.1-8B-Instruct config.json: 32 layers, hidden 4096, intermediate 14336, 32 heads.
    "llama-3.1-8b-instruct": _llama(32, 4096, 14336, 32, tied=False),
    # meta-llama/Llama-3.1-70B-Instruct config.json: 80 layers, hidden 8192, intermediate 28672, 64 heads.
    "llama-3.1-70b-instruct": _llama(80, 8192, 28672, 64, tied=False, other_v=T.Q5_K),
    # Qwen/Qwen3-30B-A3B-Instruct-2507 config.json: 48 layers, hidden 2048, 32 heads, 4 KV heads,
    # head_dim 128, 128 experts (8 used), moe_intermediate 768, vocab 151936, 262144 positions, untied.
    "qwen3-30b-a3b-instruct-2507": ArchDesc(
        arch="qwen3moe", n_layer=48, n_embd=2048, n_ff=6144, n_head=32, n_head_kv=4, head_dim=128,
        n_vocab=151936, context_length=262144, qk_norm=True, n_expert=128, n_expert_used=8, expert_ff=768,
        weight_type=T.Q4_K, output_type=T.Q6_K, layer_mix=q4_k_m_mix(48, down="ffn_down_exps"),
    ),
    # google/gemma-3-4b-it config.json (text_config): 34 layers, hidden 2560, intermediate 10240,
    # 8 heads, 4 KV heads, head_dim 256, vocab 262208, 131072 positions, sliding_window 1024 on
    # 5 of every 6 layers (llama.cpp's gemma3 period), q/k norms and post norms, tied embeddings.
    "gemma-3-4b-it": ArchDesc(
        arch="gemma3", n_layer=34, n_embd=2560, n_ff=10240, n_head=8, n_head_kv=4, head_dim=256,
        n_vocab=262208, context_length=131072, tied=True, qk_norm=True, post_norms=True, sliding_window=1024,
        weight_type=T.Q4_K, embd_type=T.Q6_K, layer_mix=q4_k_m_mix(34),
    ),
    # LiquidAI/LFM2-1.2B config.json: 16 layers, hidden 2048, block_ff_dim 12288 auto-adjusted to
    # 8192, 32 heads, 8 KV heads, full attention on layers 2,5,8,10,12,14, short convolutions
    # (conv_L_cache 3) elsewhere, vocab 65536, 128000 positions, tied embeddings.
    "lfm2-1.2b": ArchDesc(
        arch="lfm2", n_layer=16, n_embd=2048, n_ff=8192, n_head=32,
        n_head_kv=tuple(8 if il in LFM2_ATTENTION else 0 for il in range(16)),
        n_vocab=65536, context_length=128000, tied=True, qk_norm=True, shortconv=3,
        recurrent_layers=tuple(il for il in range(16) if il not in LFM2_ATTENTION), final_norm="token_embd_norm",
        weight_type=T.Q4_K, embd_type=T.Q6_K, layer_mix=q4_k_m_mix(16, attention_layers=LFM2_ATTENTION),
    ),
}


def skeleton(entry: CatalogueEntry) -> ArchDesc:
    """The entry's shape with its labels and its cited published size."""
    return replace(
        SHAPES[entry.name],
        name=f"{entry.title} {entry.quant} (skeleton, header only)",
        file_type=Q4_K_M,
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
