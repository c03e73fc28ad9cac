"""The records of a fit estimate: what was asked, and where every byte would go.

Three claims stay apart: `Claims.file_size` is storage, the verdict is an
admission estimate against one snapshot, and `runtime_evidence` stays None until a real run
measured something — an estimate is never presented as evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.fit.placement.gpu_split import MAX_TENSOR_SPLIT, offloaded_blocks
from gguf_budget.core.fit.runtime_types import EngineSettings, RuntimeMemory
from gguf_budget.core.fit.server.types import ServerLoad, ServerSettings
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.machine.usable import DEFAULT_GPU_RESERVE, DEFAULT_HOST_RESERVE, usable
from gguf_budget.core.units import INT64_MAX
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType
from gguf_budget.core.vocab import TextEnum

GiB = 1024**3


class FitVerdict(TextEnum):
    """Whether the model is admitted against the snapshot, and how; the value is the JSON word."""

    FITS_GPU = "fits_gpu"
    FITS_SPLIT = "fits_split"
    CPU_ONLY = "cpu_only"
    DOES_NOT_FIT = "does_not_fit"
    UNKNOWN = "unknown"
    """A fact the estimate needs is missing: neither admitted nor refused."""

    @property
    def admitted(self) -> bool:
        return self in (FitVerdict.FITS_GPU, FitVerdict.FITS_SPLIT, FitVerdict.CPU_ONLY)


@dataclass(frozen=True)
class Reserves:
    """Bytes kept back (engineering assumptions): on the host, and `gpu` on the first GPU the fit uses.

    `per_gpu[i]`, where given, replaces the default for the GPU with index i (editable per device).
    """

    host: int = DEFAULT_HOST_RESERVE
    gpu: int = DEFAULT_GPU_RESERVE
    per_gpu: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not all(0 <= r <= INT64_MAX for r in (self.host, self.gpu, *self.per_gpu)):
            raise RequestError("reserves must be from 0 to 2^63−1 bytes")

    def for_gpu(self, index: int, first: bool) -> int:
        if index < len(self.per_gpu):
            return self.per_gpu[index]
        return self.gpu if first else 0


@dataclass(frozen=True, kw_only=True)
class FitRequest:
    """ctx None = the model's context length; gpu_layers None = the most that fit (auto);
    tensor_split None = llama.cpp's default split by free memory, else `-ts` shares per GPU;
    `server` = what llama-server runs beside the model (slots, cache, checkpoints, projector, draft);
    `kv_type` is the K cache's type (`-ctk`) and `v_type` the V cache's (`-ctv`; None = the same as K);
    `n_cpu_moe` keeps the routed experts of blocks 0 … N − 1 in host RAM as llama.cpp's `--n-cpu-moe N` does
    (N ≥ the block count: every block, `--cpu-moe`); None = not asked (the expert offload is then searched);
    `fit` False is llama.cpp's `-fit off` (an unset ctx is the trained context, unset GPU layers are all of them) and
    `fit_ctx` its `-fitc` floor; `engine_argv` is what the person set of the engine in llama.cpp's words
    (`EngineOptions.argv`), which the printed command repeats."""

    ctx: int | None = None
    gpu_layers: int | None = None
    kv_type: KVType = DEFAULT_KV_TYPE
    v_type: KVType | None = None
    n_cpu_moe: int | None = None
    fit: bool = True
    fit_ctx: int = DEFAULT_CTX
    engine_argv: tuple[str, ...] = ()
    reserves: Reserves = field(default_factory=Reserves)
    tensor_split: tuple[float, ...] | None = None
    engine: EngineSettings = field(default_factory=EngineSettings)
    server: ServerSettings = field(default_factory=ServerSettings)

    def __post_init__(self) -> None:
        split = self.tensor_split
        if split is not None and (not 0 < len(split) < MAX_TENSOR_SPLIT
                                  or not all(math.isfinite(x) and x >= 0 for x in split)):
            raise RequestError(f"a tensor split is 1 to {MAX_TENSOR_SPLIT - 1} shares, each 0 or more")
        if self.ctx is not None and not 1 <= self.ctx <= INT64_MAX:
            raise RequestError("context must be from 1 to 2^63−1 tokens")
        if self.gpu_layers is not None and not 0 <= self.gpu_layers <= INT64_MAX:
            raise RequestError("GPU layers must be from 0 to 2^63−1")
        if self.kv_type not in KV_TYPES or self.v_type is not None and self.v_type not in KV_TYPES:
            raise RequestError(f"KV cache type must be one of {', '.join(KV_TYPES)}")
        if self.n_cpu_moe is not None and not 0 <= self.n_cpu_moe <= INT64_MAX:
            raise RequestError("--n-cpu-moe must be from 0 to 2^63−1")
        object.__setattr__(self, "kv_type", KVType(self.kv_type))
        if self.v_type is not None:
            object.__setattr__(self, "v_type", KVType(self.v_type))


@dataclass(frozen=True)
class WeightSplit:
    """Weights on GPU and host: the coarse first gate (file · g / L) and the exact inventory."""

    file_bytes: int
    gpu_coarse: int
    host_coarse: int
    gpu_exact: int
    host_exact: int


@dataclass(frozen=True, kw_only=True)
class KVEstimate:
    """The FP16 lower bound (attention layers only, unpadded) beside llama.cpp's allocation."""

    kv_type: KVType
    ctx: int | None
    cells: int | None
    lower_bound: int | None
    engine: int | None
    attention_layers: int
    swa_layers: int
    recurrent_layers: int
    recurrent_state: int | None
    gpu: int | None
    host: int | None


@dataclass(frozen=True, kw_only=True)
class DeviceLoad:
    """One memory pool: what it has, what is kept back, and what the placement puts on it.

    `shared` is what GPUs whose budget is host RAM (GTT, Apple's unified memory) place there:
    the host's need includes it, so each byte is counted once, in the one pool. `slots` is a
    GPU's run of layer slots [start, end) (slot L = the output layer). `server` is what
    llama-server adds on this device (`server` Rule 3: projector, draft, checkpoints, prompt cache).
    `compute` is the compute buffer llama.cpp's scheduler reserves there (`runtime_memory` Rule 5; the host's
    adds the logits output buffer, Rule 4), None when the context is unknown: every device must hold its weights,
    KV, compute and what the server adds within its usable memory (`devices` Rule 4). The host's `sampler` and
    `kv_cells` are the process's own arrays its need counts beside (`runtime_memory` Rules 11–12).
    """

    name: str
    label: str
    available: int
    reserve: int
    weights: int
    kv: int | None
    shared: int = 0
    slots: tuple[int, int] | None = None
    server: int = 0
    compute: int | None = 0
    sampler: int = 0
    kv_cells: int = 0

    @property
    def usable(self) -> int:
        return usable(self.available, self.reserve)

    @property
    def need(self) -> int | None:
        if self.kv is None or self.compute is None:
            return None
        return self.weights + self.kv + self.compute + self.shared + self.server + self.sampler + self.kv_cells

    @property
    def shortfall(self) -> int | None:
        need = self.need
        return None if need is None else max(need - self.usable, 0)


def shortfalls(devices: tuple[DeviceLoad, ...]) -> dict[str, int]:
    return {d.name: d.shortfall for d in devices if d.shortfall}


@dataclass(frozen=True, kw_only=True)
class Strategy:
    """An alternative placement shown beside the default (MoE: routed experts in host RAM)."""

    name: str
    description: str
    verdict: FitVerdict
    devices: tuple[DeviceLoad, ...]
    host_exact: int
    gpu_layers: int | None = None
    n_cpu_moe: int | None = None
    command: RunCommand | None = None

    @property
    def shortfall(self) -> dict[str, int]:
        return shortfalls(self.devices)


@dataclass(frozen=True)
class Claims:
    """Storage, admission and runtime evidence — three different claims, never merged."""

    file_size: int
    header_only: bool
    admission: FitVerdict
    captured_at: float
    snapshot_source: SnapshotSource
    runtime_evidence: str | None = None


@dataclass(frozen=True, kw_only=True)
class FitEstimate:
    """Everything `fit --json` shows, for one model, snapshot and request."""

    snapshot: HardwareSnapshot
    reserves: Reserves
    request: FitRequest
    n_layer: int
    gpu_layers: int
    auto_gpu_layers: int | None
    output_on_gpu: bool
    weights: WeightSplit
    kv: KVEstimate
    devices: tuple[DeviceLoad, ...]
    verdict: FitVerdict
    unknowns: tuple[str, ...]
    notes: tuple[str, ...]
    claims: Claims
    moe: Strategy | None
    moe_offload: Strategy | None = None
    command: RunCommand | None = None
    memory: RuntimeMemory | None = None
    """What llama.cpp would hold per device beyond weights + KV (`runtime_memory`); its context-sized
    items are None when the context is unknown."""
    server: ServerLoad | None = None
    """What llama-server adds (`server`): slots, prompt cache, checkpoints, projector, draft."""
    refused: str | None = None
    """llama.cpp's own error where it would not make this load at all (`split_mode` Rule 1)."""

    @property
    def n_slots(self) -> int:
        """What -ngl counts up to: every block and the output layer (`gpu_split` Rule 1)."""
        return self.n_layer + 1

    @property
    def offloaded_blocks(self) -> int:
        """Blocks on a GPU, the output layer not counted (`gpu_split.offloaded_blocks`)."""
        return offloaded_blocks(self.gpu_layers)

    @property
    def peak_rss_server(self) -> int | None:
        """Predicted peak RSS of llama-server in the worst case: its context filled, its prompt cache and every
        slot's checkpoints full (the band's top with the server's full lists in place of its slots' checkpoints)."""
        full = self.memory.full if self.memory is not None else None
        worst = self.server.worst_held if self.server is not None else 0
        return None if full is None or worst is None else full.total - full.checkpoints + worst

    @property
    def recommended(self) -> RunCommand | None:
        """The command to run: the expert offload where it fits and the plain split leaves layers on the
        host (llama.cpp's `--fit` too moves experts before layers) — unless the user fixed the layer count.
        None when nothing fits: a runnable command is printed only for a load that fits."""
        m = self.moe_offload
        if (m is not None and m.command is not None and m.verdict.admitted and self.verdict is not FitVerdict.FITS_GPU
                and self.request.gpu_layers is None):
            return m.command
        return self.command if self.verdict.admitted else None

    @property
    def shortfall(self) -> dict[str, int]:
        return shortfalls(self.devices)
