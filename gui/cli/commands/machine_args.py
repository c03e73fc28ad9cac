"""The machine a full load is judged on: probed, typed (`--host-available`, the GPU flags) or a preset.

Rule 1: the machine is probed unless the flags describe it: `--host-available` and the GPU flags
        (or `--preset`) replace the probed figures (a hypothetical machine); with both given nothing
        is probed. `--no-gpu` alone leaves the GPUs out of the probed machine, which stays probed.
Rule 2: a typed machine's CPU features are `--cpu-features`, else this machine's: its repacked
        weight copies are priced as here.
Rule 3: `fit`, `quants`, `tune` and `library` share these flags; the module imports no full-load
        pricing, so a command that only needs the machine does not pay for `fit`'s reports.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from gguf_budget.core.errors import CommandError
from gguf_budget.core.machine.cpu_features import LLAMA_CPP_NAMES, read_cpu_features
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.machine.snapshot import (
    GpuInfo, HardwareSnapshot, hypothetical_gpus, hypothetical_machine, sized_gpus, what_if, without_gpus,
)
from gguf_budget.core.machine.usable import DEFAULT_GPU_RESERVE, DEFAULT_HOST_RESERVE
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.ranges import GPU_COUNT, MEMORY
from gguf_budget.core.units import human_bytes

from gguf_budget.gui.cli.args import ranged
from gguf_budget.gui.cli.gpu_args import preset_snapshot, sizes_arg

NO_GPU_REASON = "left out by --no-gpu"


def add_machine_arguments(p: argparse.ArgumentParser) -> None:
    """The KV type, the hypothetical machine and the reserves (Rule 3)."""
    p.add_argument("--kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value,
                   help="KV cache type (default f16)")
    memory = ranged(MEMORY)
    p.add_argument("--host-available", type=memory, metavar="SIZE", help=f"hypothetical free host RAM, {MEMORY.text}")
    p.add_argument("--gpu-total", type=sizes_arg, metavar="SIZE[,SIZE…]",
                   help="hypothetical GPU memory: one size for --gpu-count GPUs, or one size a GPU (24G,32G)")
    p.add_argument("--gpu-free", type=sizes_arg, metavar="SIZE[,SIZE…]",
                   help="hypothetical free GPU memory: one for every GPU, or one a GPU (default: all free)")
    p.add_argument("--gpu-count", type=ranged(GPU_COUNT), metavar="N",
                   help=f"hypothetical GPUs of that size, {GPU_COUNT.text} (default 1)")
    p.add_argument("--no-gpu", action="store_true", help="plan for the host only")
    p.add_argument("--cpu-features", metavar="LIST|none",
                   help=f"a typed machine's CPU features in llama.cpp's names ({', '.join(sorted(LLAMA_CPP_NAMES))}), "
                        "which decide the CPU's repacked weight copies (default: this machine's)")
    p.add_argument("--host-reserve", type=memory, default=DEFAULT_HOST_RESERVE, metavar="SIZE",
                   help=f"host RAM kept back (default {human_bytes(DEFAULT_HOST_RESERVE)})")
    p.add_argument("--gpu-reserve", type=memory, default=DEFAULT_GPU_RESERVE, metavar="SIZE",
                   help=f"memory kept back on the first GPU (default {human_bytes(DEFAULT_GPU_RESERVE)})")
    p.add_argument("--gpu-reserves", type=sizes_arg, metavar="SIZE,SIZE,…",
                   help="memory kept back on GPU 0, 1, … (replaces --gpu-reserve for the GPUs it names)")
    p.add_argument("--preset", metavar="NAME[,NAME…]",
                   help="a hypothetical machine from the preset table: GPUs such as 'RTX 4090' (several: "
                        "'RTX 3090,RTX 3060'), or a whole machine such as 'M2 Max 96GB' (`hw --presets` lists them)")


def _typed_gpus(args: argparse.Namespace) -> tuple[GpuInfo, ...] | None:
    """The GPUs the flags describe; None when they describe none (keep the probed ones)."""
    sized = args.gpu_total is not None or args.gpu_free is not None
    if args.no_gpu and (sized or args.gpu_count is not None):
        raise CommandError("--no-gpu cannot be combined with --gpu-total/--gpu-free/--gpu-count")
    if args.no_gpu:
        return ()
    if not sized:
        if args.gpu_count is not None:
            raise CommandError("--gpu-count needs --gpu-total or --gpu-free")
        return None
    totals = args.gpu_total if args.gpu_total is not None else args.gpu_free
    if len(totals) > 1 or args.gpu_free is not None and len(args.gpu_free) > 1:
        if args.gpu_count is not None and args.gpu_count != max(len(totals), len(args.gpu_free or ())):
            raise CommandError(f"--gpu-count {args.gpu_count} but {len(totals)} GPU sizes: give one or the other")
        if len(totals) == 1:
            totals = totals * len(args.gpu_free)
        return sized_gpus(totals, args.gpu_free)
    free = None if args.gpu_free is None else args.gpu_free[0]
    return hypothetical_gpus(args.gpu_count or 1, totals[0], free)


def _cpu_features(args: argparse.Namespace) -> frozenset[str] | None:
    """A typed machine's CPU: `--cpu-features`, else this machine's (its repacked copies are priced as here)."""
    typed = getattr(args, "cpu_features", None)  # commands that share the machine flags but not this one
    if typed is None:
        return read_cpu_features()
    words = {w.strip().upper() for w in typed.split(",") if w.strip()}
    if words == {"NONE"}:
        return frozenset()
    unknown = words - LLAMA_CPP_NAMES
    if unknown:
        raise CommandError(f"--cpu-features: {', '.join(sorted(unknown))} is not one of {', '.join(sorted(LLAMA_CPP_NAMES))} "
                           "(or none)")
    return frozenset(words)


def machine(args: argparse.Namespace) -> HardwareSnapshot:
    """Rule 1."""
    if args.preset is not None:
        return preset_snapshot(args, probe_hardware)
    gpus = _typed_gpus(args)
    if args.host_available is not None and gpus is not None:
        typed = replace(hypothetical_machine(args.host_available, captured_at=time.time()), cpu_features=_cpu_features(args))
        return what_if(typed, gpus=gpus)
    if args.no_gpu:
        return without_gpus(probe_hardware(), NO_GPU_REASON)
    return what_if(probe_hardware(), args.host_available, gpus)
