"""Header reading speed and memory (DESIGN §6).

1. A Llama-3-8B-shaped file (128,256 tokens, 280,147 merges, written sparse): median time of
   `load_model` vs `gguf.GGUFReader` on the same file in the same run, and their ratio.
   Budget: ≤ 60 ms and ≥ 50× faster.
2. A Llama-3-70B-shaped Q4_K_M file (~40 GB, sparse — no disk used): RSS added by
   `load_model`, measured in a fresh subprocess. Budget: ≤ 20 MB.

Run: .venv/bin/python benchmarks/bench_header.py [--reader-runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf_factory import ArchDesc, write_gguf  # noqa: E402

from gguf_budget.core import load_model  # noqa: E402

LLAMA3_8B = ArchDesc(
    name="Llama-3-8B-shaped", n_layer=32, n_embd=4096, n_ff=14336, n_head=32, n_head_kv=8, n_vocab=128256,
    context_length=8192, weight_type=T.Q4_K, output_type=T.Q6_K, mix={"attn_v": T.Q6_K, "ffn_down": T.Q6_K},
    tokens=128256, merges=280147, file_type=15,
)
LLAMA3_70B = ArchDesc(
    name="Llama-3-70B-shaped", n_layer=80, n_embd=8192, n_ff=28672, n_head=64, n_head_kv=8, n_vocab=128256,
    context_length=131072, weight_type=T.Q4_K, output_type=T.Q6_K, mix={"attn_v": T.Q6_K, "ffn_down": T.Q6_K},
    file_type=15,
)

RSS_PROBE = """
import sys, psutil
from gguf_budget.core import load_model
p = psutil.Process()
before = p.memory_info().rss
spec = load_model(sys.argv[1])
after = p.memory_info().rss
print(after - before, spec.tensor_bytes)
"""


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--reader-runs", type=int, default=3)
    args = ap.parse_args()
    from gguf import GGUFReader

    with tempfile.TemporaryDirectory() as tmp:
        path = write_gguf(Path(tmp) / "llama3-8b.gguf", LLAMA3_8B, "sparse")[0]
        ours = _median_ms(lambda: load_model(path), args.runs)
        theirs = _median_ms(lambda: GGUFReader(path), args.reader_runs)
        print(f"8B-shaped open: load_model median {ours:.1f} ms over {args.runs} runs "
              f"(budget 60 ms: {ours / 60:.2f}x of budget)")
        print(f"8B-shaped open: gguf.GGUFReader median {theirs:.0f} ms over {args.reader_runs} runs; "
              f"ratio {theirs / ours:.0f}x (budget >= 50x)")

        big = write_gguf(Path(tmp) / "llama3-70b.gguf", LLAMA3_70B, "sparse")[0]
        out = subprocess.run([sys.executable, "-c", RSS_PROBE, str(big)], capture_output=True, text=True, check=True)
        added, tensor_bytes = (int(x) for x in out.stdout.split())
        print(f"70B-shaped ({tensor_bytes / 1e9:.1f} GB sparse file): RSS added by load_model "
              f"{added / 2**20:.1f} MiB (budget 20 MB)")


if __name__ == "__main__":
    main()
