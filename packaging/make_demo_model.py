"""Regenerate the bundled demo model: a header-only skeleton of TinyLlama-1.1B-Chat v1.0, Q4_K_M.

Built from the published config (TinyLlama/TinyLlama-1.1B-Chat-v1.0 `config.json`: 22 layers,
hidden 2048, intermediate 5632, 32 heads, 4 KV heads, vocab 32000, 2048 context, untied
embeddings) with llama.cpp's Q4_K_M mix: Q4_K everywhere, Q6_K for `output` and for
`attn_v` / `ffn_down` on the layers llama.cpp's `use_more_bits` rule picks. No weights: the
file holds the header and tensor directory only, so it is a few KB and honest about it.

Run: python packaging/make_demo_model.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402

from gguf_factory import ArchDesc, write_gguf  # noqa: E402

N_LAYER = 22


def use_more_bits(il: int, n: int) -> bool:
    """llama.cpp llama-quant.cpp: the layers that get the higher-precision type in *_M mixes."""
    return il < n // 8 or il >= 7 * n // 8 or (il - n // 8) % 3 == 2


TINYLLAMA_Q4_K_M = ArchDesc(
    arch="llama",
    name="TinyLlama-1.1B-Chat v1.0 (skeleton, header only)",
    n_layer=N_LAYER,
    n_embd=2048,
    n_ff=5632,
    n_head=32,
    n_head_kv=4,
    n_vocab=32000,
    context_length=2048,
    weight_type=T.Q4_K,
    output_type=T.Q6_K,
    layer_mix={il: {"attn_v": T.Q6_K, "ffn_down": T.Q6_K} for il in range(N_LAYER) if use_more_bits(il, N_LAYER)},
    file_type=15,
    string_kv={
        "general.description": "Skeleton (header only) built from the published config of "
        "TinyLlama/TinyLlama-1.1B-Chat-v1.0 with llama.cpp's Q4_K_M mix; no weights.",
        "general.source.url": "https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    },
)


def main() -> None:
    from gguf_budget.resources import demo_model_path

    out = demo_model_path()
    write_gguf(out, TINYLLAMA_Q4_K_M, mode="header_only")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
