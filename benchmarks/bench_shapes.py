"""What every benchmark shares: the model shapes it measures on and one median timer.

Importing this module also puts `tests/` on sys.path, so benchmarks write their models
with the same `gguf_factory` the tests use.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf_factory import ArchDesc  # noqa: E402

GiB = 1024**3
Q4_K_M_MIX = {"attn_v": T.Q6_K, "ffn_down": T.Q6_K}

LLAMA3_8B = ArchDesc(
    name="Llama-3-8B-shaped", n_layer=32, n_embd=4096, n_ff=14336, n_head=32, n_head_kv=8, n_vocab=128256,
    context_length=8192, weight_type=T.Q4_K, output_type=T.Q6_K, mix=Q4_K_M_MIX,
    tokens=128256, merges=280147, file_type=15,
)
LLAMA3_70B = ArchDesc(
    name="Llama-3-70B-shaped", n_layer=80, n_embd=8192, n_ff=28672, n_head=64, n_head_kv=8, n_vocab=128256,
    context_length=131072, weight_type=T.Q4_K, output_type=T.Q6_K, mix=Q4_K_M_MIX, file_type=15,
)
GEMMA3_27B = ArchDesc(
    arch="gemma3", name="Gemma-3-27B-shaped", n_layer=62, n_embd=5376, n_ff=21504, n_head=32, n_head_kv=16,
    head_dim=128, n_vocab=262144, context_length=131072, sliding_window=1024, weight_type=T.Q4_K, tied=True,
)
MIXTRAL_8X22B = ArchDesc(
    name="Mixtral-8x22B-shaped", n_layer=56, n_embd=6144, n_ff=16384, n_head=48, n_head_kv=8, n_vocab=32768,
    context_length=65536, n_expert=8, n_expert_used=2, weight_type=T.Q4_K, output_type=T.Q6_K, file_type=15,
)
QWEN3_235B_A22B = ArchDesc(
    arch="qwen3moe", name="Qwen3-235B-A22B-shaped", n_layer=94, n_embd=4096, n_ff=12288, n_head=64, n_head_kv=4,
    head_dim=128, n_vocab=151936, context_length=40960, qk_norm=True, n_expert=128, n_expert_used=8,
    expert_ff=1536, weight_type=T.Q4_K, output_type=T.Q6_K, file_type=15,
)


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    """Median wall time of `runs` calls of `fn`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
