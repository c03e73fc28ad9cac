"""The command line's GPU vocabulary: presets, a tensor split, per-device reserves — parsed into core records.

Rule 1: `--preset NAMES` builds a hypothetical machine from the core's preset table: GPU
        presets (comma-separated for several) beside the probed host RAM or `--host-available`;
        a machine preset (Apple, Ryzen AI Max) alone, its RAM the host unless `--host-available`
        says otherwise. It cannot be mixed with the typed GPU flags.
Rule 2: `-ts a,b,…` reads as llama.cpp reads it (commas or slashes between shares);
        `--gpu-reserves A,B,…` gives GPU 0, 1, … their reserves (sizes as everywhere).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from gguf_budget.core.errors import CommandError, RequestError
from gguf_budget.core.fit.placement.gpu_split import parse_tensor_split
from gguf_budget.core.machine.presets import parse_presets, with_presets
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine, what_if
from gguf_budget.core.ranges import GPU_COUNT, MEMORY
from gguf_budget.core.units import parse_size_list


TYPED_GPU_FLAGS = ("gpu_total", "gpu_free", "gpu_count")


def tensor_split_arg(text: str) -> tuple[float, ...]:
    """'3,1' or '3/1' → (3.0, 1.0), read by the core's one parser."""
    try:
        shares = parse_tensor_split(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if shares is None:
        raise argparse.ArgumentTypeError("give the shares, e.g. 1,1 or 3,1")
    return shares


def sizes_arg(text: str) -> tuple[int, ...]:
    """'1.5G,0,512M' → bytes per GPU, in GPU order: at most `GPU_COUNT.high` sizes, each in `MEMORY`."""
    try:
        sizes = parse_size_list(text)
        if len(sizes) > GPU_COUNT.high:
            raise RequestError(f"{len(sizes)} sizes for at most {GPU_COUNT.high} GPUs")
        return tuple(MEMORY.check(size) for size in sizes)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def preset_snapshot(args: argparse.Namespace, probe: Callable[[], HardwareSnapshot]) -> HardwareSnapshot:
    """The machine `--preset` describes (Rule 1); a RequestError in words when it cannot be built."""
    if args.no_gpu or any(getattr(args, f) is not None for f in TYPED_GPU_FLAGS):
        raise CommandError("--preset cannot be combined with --no-gpu/--gpu-total/--gpu-free/--gpu-count")
    if parse_presets(args.preset)[0].unified:
        return what_if(with_presets(args.preset, hypothetical_machine(0, captured_at=time.time())), args.host_available)
    if args.host_available is not None:
        return with_presets(args.preset, hypothetical_machine(args.host_available, captured_at=time.time()))
    return with_presets(args.preset, probe())
