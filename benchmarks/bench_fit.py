"""Fit-estimate speed: the GUI calls `estimate_fit` on every slider tick (contract: well under 1 ms
for an 80-layer model), and `probe_hardware` on every refresh.

Median of `estimate_fit` on a Llama-3-70B-shaped skeleton (80 blocks, 128k vocabulary) with
auto GPU layers: no GPU, one 24 GiB GPU, four 24 GiB GPUs, and a sliding-window model; then
the median of `probe_hardware()` on this machine.

Run: .venv/bin/python benchmarks/bench_fit.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_shapes import GEMMA3_27B, LLAMA3_70B, GiB, median_seconds
from gguf_factory import write_gguf

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model, probe_hardware

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
        us = median_seconds(lambda s=snap: estimate_fit(llama, s, request), runs) * 1e6
        print(f"estimate_fit, 80 layers, {label:<16} median {us:7.1f} µs  ({e.verdict}, g = {e.gpu_layers})")
    snap = machines["1 × 24 GiB GPU"]
    us = median_seconds(lambda: estimate_fit(gemma, snap, request), runs) * 1e6
    print(f"estimate_fit, 62 layers, {'gemma3, 1 GPU':<16} median {us:7.1f} µs")
    print(f"probe_hardware() on this machine          median {median_seconds(probe_hardware, 50) * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
