"""One model load's memory, in the parts the Measured column stacks: llama.cpp's buffers by what they hold,
then the rest of the peak RSS. Every figure is llama.cpp's or the kernel's, never an estimate.

Rule 1: weights are the model buffers less the CPU_REPACK copy (a device ending in REPACK_SUFFIXES), which is
        its own part; KV holds the KV cache and the recurrent state; compute and output are those buffers,
        on every device.
Rule 2: the process's rest is the peak RSS beyond the buffers in its own memory (`is_host_buffer`: CPU ones
        and pinned `*_Host` ones), never below 0; 0 when no peak was recorded.
"""

from __future__ import annotations

from gguf_budget.core.evidence.log_records import BufferKind, LoadRecord

REPACK_SUFFIXES = ("_REPACK", "_AARCH64")  # CPU_REPACK; CPU_AARCH64 before llama.cpp renamed it (2025)


def is_host_buffer(device: str) -> bool:
    """Rule 2: buffers in the process's own memory (counted in its RSS): CPU ones, and pinned `*_Host` ones."""
    return device.startswith("CPU") or device.endswith("_Host")


def buffer_parts(run: LoadRecord) -> dict[str, int]:
    """Rule 1, by JSON key: weights, repack, kv, compute, output."""
    repack = sum(b.nbytes for b in run.buffers if b.kind is BufferKind.MODEL and b.device.endswith(REPACK_SUFFIXES))
    return {
        "weights": run.total(BufferKind.MODEL) - repack,
        "repack": repack,
        "kv": run.total(BufferKind.KV) + run.total(BufferKind.RECURRENT),
        "compute": run.total(BufferKind.COMPUTE),
        "output": run.total(BufferKind.OUTPUT),
    }


def buffers_total(run: LoadRecord) -> int:
    """Every buffer Rule 1 counts, on all devices."""
    return sum(buffer_parts(run).values())


def process_rest(run: LoadRecord, peak_rss: int | None) -> int:
    """Rule 2."""
    if peak_rss is None:
        return 0
    return max(peak_rss - sum(b.nbytes for b in run.buffers if is_host_buffer(b.device)), 0)
