"""The options `plan`, `sweep` and `fit` share for the decode estimate: tier bandwidths and free RAM.

Rule 1: a typed bandwidth wins, read as spec sheets print rates (`units.parse_rate`: `--vram-bw
        1008GB/s` is 1.008·10¹² bytes per second, `--ram-bw 20G` or `20GiB/s` 20 GiB per second; one
        line on stderr says what was read); otherwise RAM and disk
        take this machine's figures, measured once and kept (`machine.bandwidth_store`: the
        first command measures what is missing, every later one reads the same figures);
        VRAM takes the GPUs' own figures (driver or spec sheet) inside the estimate; what
        cannot be measured keeps the assumed figure — each figure says which it is.
        `--no-measure` measures nothing now: the figures kept from before, else assumed ones.
Rule 3: `--prompt-tokens N` is the prompt whose prefill and time to the first token `plan`, `fit`
        and `quants` estimate (default 1,000 tokens, as the window).
Rule 2: the free host RAM that decides page cache vs disk for streamed layers is
        `--host-available`, else the probe's; with `--no-measure` and no flag it is unknown
        (streamed layers are read from disk).
Rule 4: compute and backend are typed as the bandwidths are, and win the same way
        (`bandwidth.with_typed_compute`): `--gpu-tflops 82.6` (the GPU's dense FP16 matrix rate, else its
        preset's), `--backend cuda|rocm|vulkan|metal|sycl` (else the preset's or the maker's),
        `--cpu-gflops 400` (the CPU's rate, else the one measured here). `--draft-accept 0.6` is
        the acceptance rate a draft's speed-up is priced at (default: an assumed
        `server_speed.DEFAULT_ACCEPTANCE`, said as such).
"""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

from gguf_budget.core.machine.backend import GPU_BACKENDS, parse_backend
from gguf_budget.core.machine.bandwidth import Bandwidths, with_typed, with_typed_compute
from gguf_budget.core.errors import RequestError
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.machine.probe import probe_host
from gguf_budget.core.model.spec import ModelSpec

from gguf_budget.core.ranges import BANDWIDTH, CPU_GFLOPS, GPU_TFLOPS, MEMORY, PROMPT_TOKENS, ScaledRate
from gguf_budget.core.speed.estimate import DEFAULT_PROMPT_TOKENS
from gguf_budget.gui.cli.args import ranged

TIER_HELP = {
    "ram": "RAM read bandwidth, e.g. 20GiB/s or 64GB/s (default: this machine's, measured once by all cores "
           "and kept; `hw --measure` measures again)",
    "disk": "disk read bandwidth, e.g. 2GiB/s or 3.5GB/s (default: measured once per disk by reading the model file; "
            "assumed 2 GiB/s when the file has no weights)",
    "vram": "GPU memory bandwidth, e.g. 1008GB/s (decimal, as spec sheets print) (default: the GPU's driver or spec sheet, "
            "else assumed 400 GiB/s)",
}


def rate(limits: ScaledRate) -> Callable[[str], int]:
    """argparse type for a compute rate (`ranges.ScaledRate`, as the window reads it)."""

    def parse(text: str) -> int:
        try:
            return limits.parse(text)
        except RequestError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return parse


def acceptance(text: str) -> float:
    """argparse type for a draft acceptance rate, 0 ≤ a < 1."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"a draft acceptance rate must be a number, got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"a draft acceptance rate must be from 0 up to (not including) 1, got {text!r}")
    return value


def backend(text: str) -> str:
    try:
        return parse_backend(text).value
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_bandwidth_arguments(p: argparse.ArgumentParser, tiers: Sequence[str], host_available: bool) -> None:
    for tier in tiers:
        p.add_argument(f"--{tier}-bw", type=ranged(BANDWIDTH), metavar="RATE",
                       help=f"{TIER_HELP[tier]}; {BANDWIDTH.text}")
    p.add_argument("--cpu-gflops", type=rate(CPU_GFLOPS), metavar="GFLOPS",
                   help="the CPU's matrix-multiply rate in GFLOP/s (default: this machine's, measured once and kept)")
    if "vram" in tiers:
        from gguf_budget.core.speed.server_speed import DEFAULT_ACCEPTANCE  # the full load's (common.py Rule 4)

        p.add_argument("--gpu-tflops", type=rate(GPU_TFLOPS), metavar="TFLOPS",
                       help="the GPU's dense FP16 matrix rate in TFLOP/s (default: its preset's; unknown otherwise)")
        p.add_argument("--backend", type=backend, metavar="NAME",
                       help=f"the llama.cpp backend running the GPU layers: {', '.join(b.value for b in GPU_BACKENDS)} "
                            "(default: the preset's, else the GPU maker's usual one)")
        p.add_argument("--draft-accept", type=acceptance, metavar="RATE",
                       help=f"the share of drafted tokens the target accepts, pricing a --draft's speed-up "
                            f"(default: an assumed {DEFAULT_ACCEPTANCE:g})")
    p.add_argument("--no-measure", action="store_true",
                   help="measure nothing now: typed figures, those measured here before, else assumed ones")
    if host_available:
        p.add_argument("--host-available", type=ranged(MEMORY), metavar="SIZE",
                       help="free host RAM deciding page cache or disk for streamed layers (default: probed)")


def add_prompt_argument(p: argparse.ArgumentParser) -> None:
    """Rule 3."""
    p.add_argument("--prompt-tokens", type=ranged(PROMPT_TOKENS), default=DEFAULT_PROMPT_TOKENS, metavar="N",
                   help=f"prompt length for the prefill and time-to-first-token estimate, {PROMPT_TOKENS.text} "
                        f"(default {DEFAULT_PROMPT_TOKENS:,})")


def bandwidths_from(args: argparse.Namespace, model: ModelSpec, tiers: Sequence[str]) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rule 1: (the figures, why some tiers were not measured)."""
    typed = {tier: getattr(args, f"{tier}_bw") for tier in tiers}
    cpu_flops = getattr(args, "cpu_gflops", None)
    kept = (*(tier for tier, value in typed.items() if value is None and tier != "vram"),
            *(("compute",) if cpu_flops is None else ()))
    base, reasons = speed_figures(model.path, kept, measure=not args.no_measure)
    named = getattr(args, "backend", None)
    return with_typed_compute(with_typed(base, **typed), None if named is None else parse_backend(named),
                              getattr(args, "gpu_tflops", None), cpu_flops), reasons


def host_available_from(args: argparse.Namespace) -> int | None:
    """Rule 2."""
    if args.host_available is not None:
        return int(args.host_available)
    return None if args.no_measure else probe_host().host_available
