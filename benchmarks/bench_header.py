"""Header reading speed and memory (budgets: docs/performance.md).

1. A Llama-3-8B-shaped file (128,256 tokens, 280,147 merges, written sparse): median time of
   `load_model` vs `gguf.GGUFReader` on the same file in the same run, and their ratio.
   Budget: ≤ 60 ms and ≥ 50× faster.
2. A Llama-3-70B-shaped Q4_K_M file (~40 GB, sparse — no disk used): RSS added by
   `load_model`, measured in a fresh subprocess. Budget: ≤ 20 MB.

Run: .venv/bin/python benchmarks/bench_header.py [--reader-runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_shapes import LLAMA3_8B, LLAMA3_70B, median_seconds
from gguf_factory import write_gguf

from gguf_budget.core import load_model

RSS_PROBE = """
import sys, psutil
from gguf_budget.core import load_model
p = psutil.Process()
before = p.memory_info().rss
spec = load_model(sys.argv[1])
after = p.memory_info().rss
print(after - before, spec.tensor_bytes)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--reader-runs", type=int, default=3)
    args = ap.parse_args()
    from gguf import GGUFReader

    with tempfile.TemporaryDirectory() as tmp:
        path = write_gguf(Path(tmp) / "llama3-8b.gguf", LLAMA3_8B, "sparse")[0]
        ours = median_seconds(lambda: load_model(path), args.runs) * 1000
        theirs = median_seconds(lambda: GGUFReader(path), args.reader_runs) * 1000
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
