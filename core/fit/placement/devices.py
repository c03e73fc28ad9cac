"""The memory pools a fit fills: which GPUs it places on, what each may hold, and the one host pool.

Rule 1: the GPUs are `gpu_split.offload_gpus` (Rule 6 there): discrete first, integrated only
        without a discrete one, none whose memory is unknown. Each may hold its budget (free
        memory, or its total where the driver publishes no usage) less its reserve: the
        default GPU reserve on the first of them, per-device reserves where the user set them.
Rule 2: layer shares are the user's tensor split, else the budgets (llama.cpp splits by free memory);
        with `-sm none` the main GPU (`-mg`) takes every offloaded layer (llama-model.cpp `load_tensors`).
Rule 3: one pool: a GPU whose budget is host RAM (GTT, Apple's unified memory) draws its
        weights and KV from the host's available RAM as well, so the host's need includes
        them (`DeviceLoad.shared`) — each byte is counted once, and never beyond the pool.
Rule 4: a pool fits when its weights + KV + compute buffer + what the server adds fit within its usable
        memory (free − reserve; `DeviceLoad.need`). `fits` is the one test: the verdict asks it of every
        pool, the automatic GPU-layer and `--n-cpu-moe` searches of the GPUs (the host's need falls as
        layers leave it), and through the verdict so do the automatic and the largest ctx.
Rule 5: verdict: unknown when a needed fact is missing; else does_not_fit when any pool is
        short or llama.cpp refuses the load (`split_mode` Rule 1); else cpu_only (nothing offloaded), fits_gpu (every slot offloaded) or fits_split.
Rule 6: a compute buffer is never negative, and what the server and the shared pools add only grows with it: a
        pool short of its weights, KV, shared and server bytes alone is short whatever the scheduler reserves. So a
        search asks `fits` of the unpriced load (`device_loads`: compute 0) first, and replays llama.cpp's scheduler
        (the costly part of a placement's price) only for a placement that may fit; a verdict alone does the same.
        The answers are those of the priced load; a reported load is always priced.
Rule 7: a load's headroom is the least usable − need over its pools whose need is known (negative: short). It aims
        a search (the largest ctx, `max_ctx` Rule 3); `fits` alone decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from gguf_budget.core.fit.placement.gpu_split import Placement, chosen_gpus, offload_gpus, place_layers, split_shares
from gguf_budget.core.fit.types import DeviceLoad, FitRequest, FitVerdict
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.usable import usable
from gguf_budget.core.machine.snapshot import HardwareSnapshot

KVTable = tuple[int | None, ...]


@dataclass(frozen=True)
class Slots:
    """Prefix sums over slots 0 … L (slot L = output layer) of weights and, when known, KV."""

    weights: tuple[int, ...]
    kv: tuple[int, ...] | None

    @classmethod
    def build(cls, slot_weights: list[int], kv_table: KVTable | None) -> "Slots":
        known = [b for b in kv_table if b is not None] if kv_table is not None else []
        kv = tuple(accumulate([*known, 0], initial=0)) if kv_table is not None and len(known) == len(kv_table) else None
        return cls(tuple(accumulate(slot_weights, initial=0)), kv)

    def load(self, start: int, end: int) -> tuple[int, int | None]:
        kv = None if self.kv is None else self.kv[end] - self.kv[start]
        return self.weights[end] - self.weights[start], kv


@dataclass(frozen=True, kw_only=True)
class GpuSetup:
    """The GPUs a fit places layers on, with what each may hold (Rules 1–2)."""

    gpus: tuple[GpuInfo, ...]
    budgets: tuple[int, ...]
    reserves: tuple[int, ...]
    unreadable: tuple[GpuInfo, ...]
    tensor_split: tuple[float, ...] | None
    held: tuple[int, ...] = ()
    """Per GPU, what llama-server's projector and draft hold there before the model is placed (`server` Rule 2)."""

    @classmethod
    def build(cls, snapshot: HardwareSnapshot, request: FitRequest) -> "GpuSetup":
        gpus, unreadable = offload_gpus(snapshot.gpus)
        e = request.engine
        gpus = chosen_gpus(gpus, e.devices, e.split_mode, e.main_gpu)
        budgets = tuple(g.budget or 0 for g in gpus)
        reserves = tuple(request.reserves.for_gpu(g.index, i == 0) for i, g in enumerate(gpus))
        return cls(gpus=gpus, budgets=budgets, reserves=reserves, unreadable=unreadable,
                   tensor_split=request.tensor_split)

    @property
    def usable(self) -> tuple[int, ...]:
        """What each GPU may give the model's layers: usable (budget − reserve) less what the server holds there."""
        held = self.held or (0,) * len(self.gpus)
        return tuple(usable(b, r + h) for b, r, h in zip(self.budgets, self.reserves, held, strict=True))

    @property
    def shares(self) -> tuple[float, ...]:
        return split_shares(self.budgets, self.tensor_split)

    def place(self, n_layer: int, gpu_layers: int) -> Placement:
        return place_layers(n_layer, gpu_layers, self.budgets, self.tensor_split)


def device_loads(snapshot: HardwareSnapshot, setup: GpuSetup, host_reserve: int, slots: Slots, p: Placement,
                 host_weights: int, host_kv: int | None, host_held: int = 0) -> tuple[DeviceLoad, ...]:
    """Host first, then each GPU the fit uses; the host's need includes what shared GPUs hold (Rule 3).
    What the server holds on a device (`GpuSetup.held`, `host_held`) is part of its need."""
    gpus = []
    held = setup.held or (0,) * len(setup.gpus)
    for gpu, budget, reserve, run, h in zip(setup.gpus, setup.budgets, setup.reserves, p.runs, held, strict=True):
        w, kv = slots.load(*run)
        gpus.append(DeviceLoad(name=f"gpu{gpu.index}", label=gpu.label, available=budget, reserve=reserve, weights=w,
                               kv=kv, slots=run, server=h))
    pooled = [d for d, g in zip(gpus, setup.gpus, strict=True) if g.shares_host_memory]
    shared = sum(d.weights + (d.kv or 0) + d.server for d in pooled)
    label = "host RAM (one pool with " + ", ".join(d.name for d in pooled) + ")" if pooled else "host RAM"
    host = DeviceLoad(name="host", label=label, available=snapshot.host_available, reserve=host_reserve,
                      weights=host_weights, kv=host_kv, shared=shared, server=host_held)
    return (host, *gpus)


def fits(devices: tuple[DeviceLoad, ...], host: bool = True) -> bool:
    """Rule 4: every pool (`host` False: every GPU) holds its need within its usable memory; a need not known
    (the context unknown) is judged by what is known."""
    return not any(d.shortfall for d in (devices if host else devices[1:]))


def headroom(devices: tuple[DeviceLoad, ...]) -> int | None:
    """Rule 7 (None: no pool's need is known)."""
    spare = [d.usable - need for d in devices if (need := d.need) is not None]
    return min(spare) if spare else None


def verdict_of(devices: tuple[DeviceLoad, ...], p: Placement, unknown: bool, refused: bool = False) -> FitVerdict:
    """Rule 5; `refused`: llama.cpp would not make the load at all (`split_mode` Rule 1)."""
    if unknown:
        return FitVerdict.UNKNOWN
    if refused or not fits(devices):
        return FitVerdict.DOES_NOT_FIT
    if p.gpu_layers == 0:
        return FitVerdict.CPU_ONLY
    return FitVerdict.FITS_GPU if p.all_on_gpu else FitVerdict.FITS_SPLIT
