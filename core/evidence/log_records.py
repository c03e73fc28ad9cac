"""The records a llama.cpp log is read into: frozen, typed, and able to print themselves back.

Rule 1: sizes keep the text llama.cpp printed ("235.16", MiB with two decimals), so a record
        reproduces its log line exactly; `nbytes` is that figure in bytes (±0.005 MiB).
Rule 2: one model load is one `LoadRecord`; a log may hold several (llama-cli's `--fit`
        pass loads the model once without allocating — a dry run — then for real).
Rule 3: the memory-breakdown table keeps its whole MiB as printed; a cell the row lacks
        (host rows have no total or free) is None.
Rule 4: the loader's `file size = 4.58 GiB` keeps its figure and unit (`PrintedSize`): llama.cpp
        prints MiB below 1 GiB and GiB from there (src/llama-model-loader.cpp
        `llama_model_loader::print_info`), two decimals each, so the figure is exact to half a
        hundredth of *its* unit — ±5 MiB for a GiB figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gguf_budget.core.vocab import TextEnum

MiB = 1024 * 1024


class BufferKind(TextEnum):
    """What a `… buffer size = X MiB` line allocates, by the word llama.cpp prints."""

    MODEL = "model"
    KV = "KV"
    RECURRENT = "RS"
    OUTPUT = "output"
    COMPUTE = "compute"
    LORA = "LoRA"


def mib_bytes(text: str) -> int:
    return round(float(text) * MiB)


SIZE_UNITS = {"MiB": MiB, "GiB": 1024 * MiB}


@dataclass(frozen=True)
class PrintedSize:
    """A size as llama.cpp printed it: `value` ("4.58") in `unit` ("GiB"), two decimals (Rule 4)."""

    value: str
    unit: str

    @property
    def nbytes(self) -> int:
        return round(float(self.value) * SIZE_UNITS[self.unit])

    @property
    def resolution(self) -> float:
        """Half the last printed digit, in bytes: how far the true size can be from `nbytes`."""
        return 0.005 * SIZE_UNITS[self.unit]

    def matches(self, nbytes: int) -> bool:
        """Whether `nbytes` prints as this figure: within half a hundredth of the unit."""
        return abs(nbytes - float(self.value) * SIZE_UNITS[self.unit]) <= self.resolution * (1 + 1e-9)

    def render(self) -> str:
        return f"{self.value} {self.unit}"


@dataclass(frozen=True)
class BufferLine:
    """One allocation: its kind, the buffer's name (CPU_Mapped, CPU_REPACK, CUDA0, …) and size."""

    kind: BufferKind
    device: str
    mib: str
    unnamed_kind: bool = False

    @property
    def nbytes(self) -> int:
        return mib_bytes(self.mib)

    def render(self) -> str:
        """The line as llama.cpp prints it, whitespace collapsed, without the function name.

        `unnamed_kind`: the 2024 spelling `llm_load_tensors: CPU buffer size = …` (a model buffer).
        """
        kind = "" if self.unnamed_kind else f" {self.kind.value}"
        return f"{self.device}{kind} buffer size = {self.mib} MiB"


@dataclass(frozen=True)
class CachePart:
    """One component of a cache line: `K (f16): 3.00 MiB` (recurrent caches print R, S, …)."""

    name: str
    type_name: str
    mib: str

    def render(self) -> str:
        return f"{self.name} ({self.type_name}): {self.mib} MiB"


@dataclass(frozen=True, kw_only=True)
class CacheLine:
    """A `llama_kv_cache: size = …` line (or the older `KV self size = …`).

    `window` is "SWA" or "non-SWA" for the two caches of a sliding-window model, else None.
    `cells`, `layers` and `seqs` are None on the older line, which does not print them
    (`cells` then comes from its `llama_kv_cache_init: kv_size = N` line, when present).
    """

    mib: str
    cells: int | None
    layers: int | None
    seqs: str | None
    parts: tuple[CachePart, ...]
    window: str | None = None
    self_size_line: bool = False

    @property
    def nbytes(self) -> int:
        return mib_bytes(self.mib)

    def part_type(self, name: str) -> str | None:
        return next((p.type_name for p in self.parts if p.name == name), None)

    def render(self) -> str:
        parts = ", ".join(p.render() for p in self.parts)
        if self.self_size_line:
            return f"KV self size = {self.mib} MiB, {parts}"
        return f"size = {self.mib} MiB ({self.cells} cells, {self.layers} layers, {self.seqs}), {parts}"


@dataclass(frozen=True, kw_only=True)
class BreakdownRow:
    """One row of `common_memory_breakdown_print` / `llama_memory_breakdown_print`, in MiB."""

    name: str
    description: str | None
    total: int | None
    free: int | None
    self_mib: int
    model: int
    context: int
    compute: int
    unaccounted: int | None


@dataclass(frozen=True, kw_only=True)
class ContextSettings:
    """What the context was built with, as llama.cpp printed it (None when not printed)."""

    n_ctx: int | None = None
    n_ctx_seq: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    n_seq_max: int | None = None
    n_outputs_max: int | None = None
    flash_attn: str | None = None
    swa_full: bool = False
    type_k: str | None = None
    type_v: str | None = None


@dataclass(frozen=True, kw_only=True)
class ModelFacts:
    """What the loader said about the file: enough to match a log to a model."""

    path: str | None
    n_tensors: int | None
    n_kv_pairs: int | None
    architecture: str | None
    name: str | None
    n_layer: int | None
    n_vocab: int | None
    n_embd: int | None
    n_ctx_train: int | None
    file_size: PrintedSize | None
    type_counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True, kw_only=True)
class LoadRecord:
    """One model load and the context built on it."""

    model: ModelFacts
    dry_run: bool
    load_mode: str | None
    offloaded: tuple[int, int] | None
    buffers: tuple[BufferLine, ...]
    caches: tuple[CacheLine, ...]
    settings: ContextSettings
    breakdown: tuple[BreakdownRow, ...]
    repacked: tuple[str, ...]

    @property
    def mmap(self) -> bool | None:
        """Whether the weights were memory-mapped: from the load mode, else a `*_Mapped` buffer.

        Before late 2024 a mapped buffer was named plain `CPU`, so without either sign: None.
        """
        if self.load_mode is not None:
            return self.load_mode in ("mmap", "mmap+mlock", "true")
        return True if any(b.device.endswith("_Mapped") for b in self.buffers) else None

    def total(self, kind: BufferKind, device: str | None = None) -> int:
        """Bytes of every buffer of `kind` (on `device` when given)."""
        return sum(b.nbytes for b in self.buffers if b.kind is kind and (device is None or b.device == device))

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.device for b in self.buffers))


@dataclass(frozen=True)
class BuildInfo:
    number: int
    commit: str

    def render(self) -> str:
        return f"b{self.number}-{self.commit}"


@dataclass(frozen=True)
class EvalSpeed:
    """A speed llama.cpp measured: `eval time = … ms / N tokens (…, X tokens per second)` (decode), or the same
    after `prompt ` (prefill)."""

    milliseconds: float
    tokens: int
    tokens_per_second: float


@dataclass(frozen=True, kw_only=True)
class ServerFacts:
    """What a llama-server log says beyond the model's load: its slots, and every extra it held (bytes)."""

    slots: int | None = None
    kv_unified: bool | None = None
    cache_ram_mib: int | None = None
    """The prompt cache's limit: -1 no limit, 0 off; None when the log does not say."""
    cache_held: int = 0
    """The most the prompt cache held, as its `cache state` lines printed it."""
    checkpoints_held: int = 0
    """The most every slot's checkpoints held at once, from the `created context checkpoint` lines."""
    projector: int = 0
    """The projector's weights and compute buffer (`load_hparams: model size`, `reserve_compute_meta`)."""


@dataclass(frozen=True, kw_only=True)
class LlamaCppLog:
    """Everything read from one log; `run` is the load that really allocated memory."""

    build: BuildInfo | None
    cpu_features: frozenset[str]
    n_threads: int | None
    loads: tuple[LoadRecord, ...]
    eval: EvalSpeed | None
    peak_rss: int | None
    peak_rss_source: str | None
    command: str | None
    prompt_eval: EvalSpeed | None = None
    binary: str | None = None
    checkpoints: tuple[int, int] | None = None
    server: ServerFacts = field(default_factory=ServerFacts)
    draft: LoadRecord | None = None
    """A llama-server's draft model (the load after `loading draft model`), apart from `loads`."""

    @property
    def run(self) -> LoadRecord | None:
        """The last load that allocated (not a dry run); else the last load; None if none."""
        real = [ld for ld in self.loads if not ld.dry_run] or list(self.loads)
        return real[-1] if real else None
