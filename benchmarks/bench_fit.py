"""Fit-estimate speed: the GUI calls `estimate_fit` on every slider tick (contract: well under 1 ms
for an 80-layer model), and `probe_hardware` on every refresh.

Median of `estimate_fit` on a Llama-3-70B-shaped skeleton (80 blocks, 128k vocabulary) with
auto GPU layers: no GPU, one 24 GiB GPU, four 24 GiB GPUs, and a sliding-window model; then
the median of `probe_hardware()` on this machine.

Run: .venv/bin/python benchmarks/bench_fit.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf_factory import ArchDesc, write_gguf  # noqa: E402

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model, probe_hardware  # noqa: E402

GiB = 1024**3
LLAMA3_70B = ArchDesc(
    name="Llama-3-70B-shaped", n_layer=80, n_embd=8192, n_ff=28672, n_head=64, n_head_kv=8, n_vocab=128256,
    context_length=131072, weight_type=T.Q4_K, output_type=T.Q6_K, mix={"attn_v": T.Q6_K, "ffn_down": T.Q6_K},
    file_type=15,
)
GEMMA3_27B = ArchDesc(
    arch="gemma3", name="Gemma-3-27B-shaped", n_layer=62, n_embd=5376, n_ff=21504, n_head=32, n_head_kv=16,
    head_dim=128, n_vocab=262144, context_length=131072, sliding_window=1024, weight_type=T.Q4_K, tied=True,
)


def median_us(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    runs = ap.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        llama = load_model(write_gguf(Path(tmp) / "llama.gguf", LLAMA3_70B, "header_only")[0])
        gemma = load_model(write_gguf(Path(tmp) / "gemma.gguf", GEMMA3_27B, "header_only")[0])
    machines = {
        "no GPU": hypothetical_machine(128 * GiB),
        "1 × 24 GiB GPU": hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB),
        "4 × 24 GiB GPUs": hypothetical_machine(64 * GiB, gpu_count=4, gpu_total=24 * GiB),
    }
    request = FitRequest(ctx=32768)
    for label, snap in machines.items():
        e = estimate_fit(llama, snap, request)
        us = median_us(lambda s=snap: estimate_fit(llama, s, request), runs)
        print(f"estimate_fit, 80 layers, {label:<16} median {us:7.1f} µs  ({e.verdict}, g = {e.gpu_layers})")
    snap = machines["1 × 24 GiB GPU"]
    us = median_us(lambda: estimate_fit(gemma, snap, request), runs)
    print(f"estimate_fit, 62 layers, {'gemma3, 1 GPU':<16} median {us:7.1f} µs")
    print(f"probe_hardware() on this machine          median {median_us(probe_hardware, 50) / 1000:7.2f} ms")


if __name__ == "__main__":
    main()
