"""What the window's machine panel says about a fit estimate: bars, split, KV and the three claims.

Pure views over `FitEstimate` and `HardwareSnapshot`, so the GUI shows the core's numbers
and computes none itself, and the wording is tested without Qt.

Rule 1: a memory bar splits a pool's total into used, the reserve actually kept back and usable
        (`machine.usable.pool_shares`; a GPU's usable is the fit's, by the same rule); the placement's need
        (weights + KV + compute buffer on that pool, `devices` Rule 4) is marked against it, and
        its caption says each part beside the reserve and the free and total it is compared with.
Rule 2: the three claims stay three sentences: file size is storage, the verdict is an
        admission estimate against one snapshot, and runtime evidence is "none" until a
        real run measured something.
Rule 3: a probed snapshot reports its age; a hypothetical one says it was typed in.
Rule 4: with no model open the host RAM bar is still drawn (`host_bar`): the machine alone,
        used | reserve | usable, with no need marked.
Rule 5: a probed machine without a GPU reads NO_GPU_WORDS — a plain fact, not a fault to fix;
        why the probe found none (say, NVIDIA's NVML library is not installed) is only the
        detail (`gpu_status_detail`: `hw` and the status line's tooltip). GPUs a person left
        out (`--no-gpu`) are said with that reason (`gpus.is_driver_detail`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.placement.gpu_split import block_run
from gguf_budget.core.fit.types import DeviceLoad, FitEstimate, FitVerdict, Reserves
from gguf_budget.core.machine.gpus import NO_GPU, is_driver_detail
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.machine.usable import pool_shares
from gguf_budget.core.units import human_bytes

NO_GPU_WORDS = "No GPU found — everything runs on the CPU"

# The pool bars' legend, in the order the bar draws its segments; "need" is the tick.
POOL_LEGEND: tuple[tuple[str, str], ...] = (
    ("used", "in use by other programs"),
    ("reserve", "kept back (reserve)"),
    ("usable", "usable for the model"),
    ("need", "| the model's need ends here"),
)


@dataclass(frozen=True, kw_only=True)
class PoolBar:
    """One memory pool (host RAM or a GPU) as a bar: used | reserve | usable, and the need."""

    name: str
    label: str
    total: int
    used: int
    reserve: int
    usable: int
    need: int | None
    shortfall: int | None
    layers: str = ""
    parts: str = ""
    """The need's parts in words (`need_parts`): weights, KV, compute and what else the pool holds."""

    @property
    def caption(self) -> str:
        need = "unknown" if self.need is None else human_bytes(self.need)
        short = f", short by {human_bytes(self.shortfall)}" if self.shortfall else ""
        holds = f" ({self.layers})" if self.layers else ""
        parts = f"\n= {self.parts}" if self.parts else ""
        return (f"{human_bytes(self.used)} used · {human_bytes(self.reserve)} reserve · "
                f"{human_bytes(self.usable)} usable of {human_bytes(self.total)}; this placement needs {need}{short}{holds}"
                f"{parts}")


def held_words(d: DeviceLoad) -> list[str]:
    """What a pool holds beyond its own weights, KV and compute: a shared GPU's share, llama-server's additions, the
    process's samplers and KV cells' metadata (`runtime_memory` Rules 11–12)."""
    return (([f"held by GPUs in this pool {human_bytes(d.shared)}"] if d.shared else [])
            + ([f"llama-server {human_bytes(d.server)}"] if d.server else [])
            + ([f"samplers {human_bytes(d.sampler)}"] if d.sampler else [])
            + ([f"KV cells' metadata {human_bytes(d.kv_cells)}"] if d.kv_cells else []))


def need_parts(d: DeviceLoad) -> str:
    """A pool's need in its parts (`devices` Rule 4): 'weights 3.9 GiB + KV 512 MiB + compute 742 MiB'."""
    return " + ".join([f"weights {human_bytes(d.weights)}", f"KV {human_bytes(d.kv)}",
                       f"compute {human_bytes(d.compute)}", *held_words(d)])


def device_total(fit: FitEstimate, d: DeviceLoad) -> int:
    """The pool's total memory: the host's RAM, a GPU's memory (its budget where the driver gives no total)."""
    gpu = next((g for g in fit.snapshot.gpus if f"gpu{g.index}" == d.name), None)
    if gpu is None:
        return fit.snapshot.host_total
    return gpu.total if gpu.total is not None else d.available


def slots_text(slots: tuple[int, int] | None, n_layer: int) -> str:
    """A GPU's run of slots in words: 'blocks 13–26', 'blocks 27–31 and the output layer', 'no layers'."""
    if slots is None:
        return ""
    run = block_run(slots, n_layer)
    if run.empty:
        return "no layers"
    words = [f"block {run.first}" if run.count == 1 else f"blocks {run.first}–{run.last}"] if run.count > 0 else []
    words += ["the output layer"] if run.output else []
    return " and ".join(words)


def pool_bars(fit: FitEstimate) -> tuple[PoolBar, ...]:
    """Host first, then each GPU the fit uses, in the snapshot's order (Rule 1)."""
    bars = []
    for device in fit.devices:
        total = device_total(fit, device)
        shares = pool_shares(total, device.available, device.reserve)
        bars.append(PoolBar(name=device.name, label=device.label, total=total, used=shares.used,
                            reserve=shares.reserve, usable=device.usable, need=device.need,
                            shortfall=device.shortfall, layers=slots_text(device.slots, fit.n_layer),
                            parts=need_parts(device)))
    return tuple(bars)



def host_bar(snapshot: HardwareSnapshot, reserves: Reserves) -> PoolBar:
    """Rule 4: the host RAM of a machine, before any model is judged against it."""
    shares = pool_shares(snapshot.host_total, snapshot.host_available, reserves.host)
    return PoolBar(name="host", label="host RAM", total=snapshot.host_total, used=shares.used,
                   reserve=shares.reserve, usable=shares.usable, need=None, shortfall=None)


def split_text(fit: FitEstimate) -> str:
    auto = "unknown" if fit.auto_gpu_layers is None else str(fit.auto_gpu_layers)
    where = "output layer on GPU" if fit.output_on_gpu else "output layer in host RAM"
    return (f"{fit.gpu_layers} of {fit.n_slots} slots on GPU ({fit.n_layer} blocks + the output layer; "
            f"auto: {auto}); {where}")


def weight_rows(fit: FitEstimate) -> tuple[tuple[str, str], ...]:
    w = fit.weights
    return (
        ("Weights, by file share", f"GPU {human_bytes(w.gpu_coarse)} · host {human_bytes(w.host_coarse)} "
                                   "(file size × GPU layers / blocks)"),
        ("Weights, exact", f"GPU {human_bytes(w.gpu_exact)} · host {human_bytes(w.host_exact)} (tensor inventory)"),
    )


def kv_rows(fit: FitEstimate) -> tuple[tuple[str, str], ...]:
    kv = fit.kv
    ctx = "unknown ctx" if kv.ctx is None else f"ctx {kv.ctx:,}"
    return (
        ("KV lower bound", f"{human_bytes(kv.lower_bound)} (FP16, {ctx}, {kv.attention_layers} attention layers)"),
        ("KV engine", f"{human_bytes(kv.engine)} ({kv.kv_type}, {kv.cells or 0:,} cells): "
                      f"GPU {human_bytes(kv.gpu)} · host {human_bytes(kv.host)}"),
    )


def _admission(verdict: FitVerdict) -> str:
    if verdict is FitVerdict.UNKNOWN:
        return "cannot be judged (facts missing)"
    return "admitted" if verdict.admitted else "not admitted"


def claim_rows(fit: FitEstimate, snapshot_when: str) -> tuple[tuple[str, str], ...]:
    """Storage, admission, runtime evidence — in that order, in separate words (Rule 2)."""
    c = fit.claims
    storage = " (the complete file its header describes)" if c.header_only else ""
    evidence = c.runtime_evidence or "none — only a real run can measure this"
    return (
        ("File size (storage)", f"{human_bytes(c.file_size)}{storage}; says nothing about RAM or VRAM"),
        ("Admission (estimate)", f"{_admission(fit.verdict)} against the {snapshot_when}; "
                                 "an estimate, not a guarantee"),
        ("Runtime evidence", evidence),
    )


def snapshot_when(snapshot: HardwareSnapshot, now: float) -> str:
    """'snapshot probed 12 s ago' or 'hypothetical machine (typed in, not measured)' (Rule 3)."""
    if snapshot.source is SnapshotSource.HYPOTHETICAL:
        return "hypothetical machine (typed in, not measured)"
    age = snapshot.age(now)
    if age < 120:
        return f"snapshot probed {age} s ago"
    return f"snapshot probed {age // 60} min ago" if age < 7200 else f"snapshot probed {age // 3600} h ago"


def gpu_status(snapshot: HardwareSnapshot) -> str:
    """'' when GPUs are listed without trouble; a GPU problem; else that there is none (Rule 5)."""
    if snapshot.gpus:
        return f"GPU problem: {snapshot.gpu_error}" if snapshot.gpu_error else ""
    if snapshot.source is SnapshotSource.HYPOTHETICAL:
        return "no GPU in this hypothetical machine"
    return NO_GPU_WORDS if is_driver_detail(snapshot.gpu_error) else f"no GPU: {snapshot.gpu_error}"


def gpu_status_detail(snapshot: HardwareSnapshot) -> str:
    """Rule 5: why a probe found no GPU, in the driver's terms ('' when there is nothing to add)."""
    if snapshot.gpus or snapshot.source is SnapshotSource.HYPOTHETICAL or not is_driver_detail(snapshot.gpu_error):
        return ""
    return f"Why: {snapshot.gpu_error or NO_GPU}"
