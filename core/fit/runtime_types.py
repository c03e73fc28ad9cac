"""The records of what llama.cpp holds beyond weights and KV: settings in, itemized memory out.

Two kinds of memory are kept apart (issue 13): **anonymous** memory (KV, compute, output,
repacked copies, weights loaded without mmap, the process itself) is what the machine must
really have; **file-backed** mapped weights count in RSS but are clean pages the kernel can
drop and read back. And two questions (issue 22): what llama.cpp **reserves** (`DeviceMemory`,
the buffers its log prints) and what the process has **resident** at a moment of a run
(`Resident`: the touched part of each buffer, work buffers, checkpoints, the process). Peak RSS
is a band: a short prompt, and a context that has filled — the figure the verdict is told.
The verdict compares each device's weights + KV + compute buffer with its usable memory (`VERDICT_BASIS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.buffers.flash_attn_support import FlashAttn
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.vocab import TextEnum

VERDICT_BASIS = ("the verdict compares each device's weights + KV + compute buffer (the host's with its output buffer, "
                 "its samplers and the KV cells' metadata) with its usable memory (free − reserve); the reserves stand "
                 "in for repacked copies and the process")


class Runtime(TextEnum):
    """The llama.cpp program that runs the model: each reserves and holds a little differently."""

    LLAMA_SERVER = "llama-server"
    LLAMA_CLI = "llama-cli"
    LLAMA_COMPLETION = "llama-completion"
    LLAMA_CPP_PYTHON = "llama-cpp-python"


class SplitMode(TextEnum):
    """llama.cpp's `-sm`: how the model is split over several GPUs (common/arg.cpp `--split-mode`)."""

    NONE = "none"
    """One GPU (`-mg`) holds every offloaded layer."""
    LAYER = "layer"
    """Each GPU holds a run of whole layers (llama.cpp's default)."""
    ROW = "row"
    """Each layer's matrices are split by rows across the GPUs (CUDA only)."""
    TENSOR = "tensor"
    """Each tensor is split across the GPUs (tensor parallelism)."""


@dataclass(frozen=True)
class TensorOverride:
    """`-ot PATTERN=BUFFER`: every tensor whose name the regex PATTERN finds (llama-model.cpp: `std::regex_search`)
    is kept in BUFFER, a buffer type as llama.cpp names it (`CPU`, `CUDA0`, `Vulkan0`, `RPC0[127.0.0.1:50052]`)."""

    pattern: str
    buffer: str


DEFAULT_RUNTIME = Runtime.LLAMA_SERVER
DEFAULT_THREADS = 8  # llama.cpp starts one per physical core; only the work buffer's per-thread tiles (≤ 1 MiB each) use it


@dataclass(frozen=True)
class Workload:
    """One run's tokens: a prompt (fed in ubatches) and the tokens generated after it."""

    prompt: int
    generated: int = 0

    def __post_init__(self) -> None:
        if self.prompt < 0 or self.generated < 0:
            raise RequestError("token counts cannot be negative")


SHORT_WORKLOAD = Workload(prompt=32, generated=32)


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """How llama.cpp runs, beyond ctx, GPU layers and cache type (defaults: llama-server of the pinned revision).

    `outputs` is how many logits rows the compute graph is reserved for, `batch` the logical
    batch (-b), `flash_attn` whether attention is fused; None: the runtime's own
    (`runtime_memory.PROFILES`: llama.cpp's `-fa auto` turns it on, llama-cpp-python's default is off). `cpu_features` None means: take
    the snapshot's. `short` is the band's short end (a log's own prompt and generated tokens when a
    log is compared). `ctx_checkpoints`: llama-server's `--ctx-checkpoints`. `n_seq` sequences share the
    context, in one KV stream when `kv_unified` (llama-server's slots, `slots`).
    The placement options are llama.cpp's own, at its defaults: `kv_offload` (False: `-nkvo`, the KV cache in host
    RAM), `op_offload` (False: `--no-op-offload`, large batches are not sent to a GPU that holds no weights of the
    op), `split_mode` (`-sm`), `main_gpu` (`-mg`), `overrides` (`-ot`, in the order given: the first match wins),
    `devices` (`-dev`: the devices to use by name; None = all, () = none), `mlock` (`--mlock`: the mapped weights
    are locked, so they count as memory the machine must have), `threads_batch` (`-tb`; None = `threads`).
    """

    runtime: Runtime = DEFAULT_RUNTIME
    ubatch: int = 512
    outputs: int | None = None
    flash_attn: bool | None = None
    swa_full: bool = False
    mmap: bool = True
    repack: bool = True
    cpu_features: frozenset[str] | None = None
    threads: int = DEFAULT_THREADS
    short: Workload = SHORT_WORKLOAD
    batch: int | None = None
    ctx_checkpoints: int = CTX_CHECKPOINTS
    n_seq: int = 1
    kv_unified: bool = False
    kv_offload: bool = True
    op_offload: bool = True
    split_mode: SplitMode = SplitMode.LAYER
    main_gpu: int = 0
    overrides: tuple[TensorOverride, ...] = ()
    devices: tuple[str, ...] | None = None
    mlock: bool = False
    threads_batch: int | None = None
    gpu_backend: GpuBackend | None = None
    """Which llama.cpp backend drives the GPUs (None: each GPU's vendor's usual one, `backends.backend_of`)."""

    def __post_init__(self) -> None:
        if self.main_gpu < 0 or self.threads_batch is not None and self.threads_batch < 1:
            raise RequestError("the main GPU cannot be negative, and batch threads must be at least 1")
        object.__setattr__(self, "split_mode", SplitMode(self.split_mode))
        if self.gpu_backend is not None:
            object.__setattr__(self, "gpu_backend", GpuBackend(self.gpu_backend))
        if self.ubatch < 1 or self.outputs is not None and self.outputs < 1 or self.threads < 1 or (
                self.batch is not None and self.batch < 1) or self.n_seq < 1:
            raise RequestError("ubatch, batch, outputs, threads and sequences must be at least 1")
        if self.ctx_checkpoints < 0:
            raise RequestError("context checkpoints cannot be negative")
        object.__setattr__(self, "runtime", Runtime(self.runtime))


@dataclass(frozen=True, kw_only=True)
class DeviceMemory:
    """What llama.cpp reserves on one device, by kind (the buffers its log prints); None where a fact is missing."""

    name: str
    mapped_weights: int
    loaded_weights: int
    repack: int
    kv: int | None
    output: int
    compute: int | None
    buffer: str = "CPU"
    """The name llama.cpp prints for this device's compute buffer (`backends` Rules 1–2)."""
    output_buffer: str = "CPU"
    """The name llama.cpp prints for the host's output buffer (`runtime_memory` Rule 4)."""

    @property
    def anonymous(self) -> int | None:
        """Reserved memory the device must really have: every buffer but the mapped file."""
        if self.kv is None or self.compute is None:
            return None
        return self.loaded_weights + self.repack + self.kv + self.output + self.compute

    @property
    def total(self) -> int | None:
        anon = self.anonymous
        return None if anon is None else anon + self.mapped_weights


@dataclass(frozen=True)
class Growth:
    """What a filled context adds over a short prompt, by the items that grow with it."""

    compute: int
    work: int
    checkpoints: int


@dataclass(frozen=True, kw_only=True)
class Resident:
    """What the llama.cpp process has resident in host RAM at the end of a workload, by item.

    `compute` is the touched part of the compute buffer, `work` the CPU backend's work buffer,
    `checkpoints` llama-server's context checkpoints (every slot's), `process` the runtime's own constant;
    `server` what llama-server's draft and projector hold in host RAM (anonymous), `server_mapped` the draft's
    mapped weights; `sampler` and `kv_cells` the process's arrays that grow with the settings (`runtime_memory`
    Rules 11–12: every sampler's candidates, the KV cells' metadata)."""

    workload: Workload
    mapped_weights: int
    loaded_weights: int
    repack: int
    kv: int
    output: int
    compute: int
    work: int
    checkpoints: int
    process: int
    server: int = 0
    server_mapped: int = 0
    sampler: int = 0
    kv_cells: int = 0

    def growth_over(self, short: Resident) -> Growth:
        """What this workload holds beyond `short`'s in the items a longer context grows."""
        return Growth(compute=self.compute - short.compute, work=self.work - short.work,
                      checkpoints=self.checkpoints - short.checkpoints)

    @property
    def anonymous(self) -> int:
        """What the machine must really have: everything but the mapped files' pages."""
        return (self.loaded_weights + self.repack + self.kv + self.output + self.compute + self.work
                + self.checkpoints + self.process + self.server + self.sampler + self.kv_cells)

    @property
    def total(self) -> int:
        """The predicted peak RSS for this workload."""
        return self.anonymous + self.mapped_weights + self.server_mapped


@dataclass(frozen=True, kw_only=True)
class RuntimeMemory:
    """The itemized prediction: one `DeviceMemory` per device (host first), the host's resident band, how it was made."""

    settings: EngineSettings
    devices: tuple[DeviceMemory, ...]
    repacked_tensors: tuple[str, ...]
    cpu_features: frozenset[str] | None
    compute_approximate: bool
    short: Resident | None = None
    full: Resident | None = None
    along: tuple[Resident, ...] = ()
    """The resident figures after each of the workloads asked for beside the band (a session's requests)."""
    attention: FlashAttn | None = None
    """Flash attention as asked and as the devices resolved it (`flash_attn_support`)."""

    @property
    def host(self) -> DeviceMemory:
        return self.devices[0]

    @property
    def peak_rss(self) -> int | None:
        """Predicted peak RSS once the context has filled: the band's top, the figure verdicts use."""
        return None if self.full is None else self.full.total

    @property
    def peak_rss_short(self) -> int | None:
        """Predicted peak RSS after a short prompt: the band's bottom."""
        return None if self.short is None else self.short.total

    @property
    def verdict_basis(self) -> str:
        return VERDICT_BASIS
