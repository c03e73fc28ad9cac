"""Where a recorded run's layers were, from its own log: every layer on the CPU, every layer on one GPU, or hybrid.

Calibration keeps a run for the tier it ran on (`speed.calibration` Rule 5): a GPU run never calibrates the CPU, nor a
CPU run a GPU. The log's model buffers and its `offloaded N/M` line say which.
"""

from __future__ import annotations

from gguf_budget.core.evidence.log_records import BufferKind, LoadRecord
from gguf_budget.core.speed.calibration import RunTier

HOST_BUFFERS = ("CPU", "CPU_Mapped", "CPU_REPACK", "AMX")


def run_tier(load: LoadRecord) -> tuple[RunTier, str]:
    """(`speed.calibration` Rule 5) (where a run's layers were, the device: 'CPU', the GPU buffer's name such as 'CUDA0', or the GPUs')
    from its model buffers and its `offloaded N/M` line; a GPU named by its buffers counts even without that line."""
    gpus = sorted({b.device for b in load.buffers if b.kind is BufferKind.MODEL and b.device not in HOST_BUFFERS
                   and not b.device.endswith("_Host") and not b.device.startswith("CPU")})
    offloaded = load.offloaded
    if not gpus and (offloaded is None or offloaded[0] == 0):
        return RunTier.CPU, "CPU"
    if len(gpus) == 1 and offloaded is not None and offloaded[0] == offloaded[1]:
        return RunTier.GPU, gpus[0]
    return RunTier.HYBRID, "+".join(gpus) or "a GPU"
