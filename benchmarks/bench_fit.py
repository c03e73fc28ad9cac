"""Fit-estimate speed: the GUI calls `estimate_fit` on every slider tick (contract: well under 1 ms
for an 80-layer model), and `probe_hardware` on every refresh.

Median of `estimate_fit` on a Llama-3-70B-shaped skeleton (80 blocks, 128k vocabulary) with
auto GPU layers: no GPU, one 24 GiB GPU, four 24 GiB GPUs, and a sliding-window model; the
Qwen3-30B-A3B catalogue skeleton on an RTX 4090 preset (MoE: the --n-cpu-moe search runs too);
one hostile shape (200,000 layers on 64 GPUs: the auto search bisects); then the median of
`probe_hardware()` on this machine.

Run: .venv/bin/python benchmarks/bench_fit.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_shapes import GEMMA3_27B, LLAMA3_70B, GiB, median_seconds
from gguf_factory import write_gguf

from dataclasses import replace

from gguf_budget.core import FitRequest, Reserves, estimate_fit, hypothetical_machine, load_model, probe_hardware
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.core.model.catalogue import catalogue_path, find_entry


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
    qwen = load_model(catalogue_path(find_entry("qwen3-30b-a3b-instruct-2507")))
    rtx = with_presets("RTX 4090", hypothetical_machine(64 * GiB))
    moe_request = FitRequest(ctx=65536)
    e = estimate_fit(qwen, rtx, moe_request)
    us = median_seconds(lambda: estimate_fit(qwen, rtx, moe_request), runs) * 1e6
    print(f"estimate_fit, 48 layers, {'MoE, RTX 4090':<16} median {us:7.1f} µs  (--n-cpu-moe {e.moe_offload.n_cpu_moe})")
    n = 200_000
    huge = replace(llama, n_layer=n, layers=llama.layers[:1] * n, layer_bytes=llama.layer_bytes[:1] * n,
                   layer_role_bytes=llama.layer_role_bytes[:1] * n)
    many = hypothetical_machine(64 * GiB, gpu_count=64, gpu_total=24 * GiB)
    hostile = FitRequest(ctx=256, reserves=Reserves(gpu=23 * GiB))
    e = estimate_fit(huge, many, hostile)
    ms = median_seconds(lambda: estimate_fit(huge, many, hostile), 3) * 1000
    print(f"estimate_fit, 200k layers × 64 GPUs (auto)  median {ms:7.1f} ms  (g = {e.gpu_layers})")
    print(f"probe_hardware() on this machine          median {median_seconds(probe_hardware, 50) * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
