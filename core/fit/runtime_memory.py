"""Predict what llama.cpp reserves per device, and what its process has resident: a band from a short prompt to a full context.

Pure; follows `core.llama_cpp.LLAMA_CPP_SOURCE`. Checked against real runs in
tests/data/llamacpp-logs and tests/data/llamacpp-runs (tests/test_runtime_memory.py,
tests/test_peak_rss_band.py).

Reserved (the buffers llama.cpp's log prints, per device):
Rule 1: weights as the placement puts them (`DeviceLoad.weights`); the host's are mapped
        (file-backed) with mmap — beside GPUs, the span of the tensors its CPU buffer keeps, the
        repacked ones not among them (`placement` Rule 3) — loaded (anonymous) without, less the
        repacked tensors, which live only in CPU_REPACK (`repack` Rule 3); a GPU's are loaded, but
        a Metal GPU's are mapped with mmap: the span of the file its tensors cover (`placement` Rule 3).
Rule 2: CPU_REPACK (`repack`): copies of the host's repackable weights for the CPU's features
        (the request's set, else the snapshot's; none predicted when neither is known). None with
        a GPU backend that has a host buffer type (CUDA_Host, Vulkan_Host, …): the host's weights
        choose it before the CPU's extra buffer types, and with mmap it becomes the mapped file
        (src/llama-model.cpp `make_cpu_buft_list`; llama-model-loader.cpp `create_tensor`). Weights
        `-ot`/`--n-cpu-moe` send to the CPU pick from that same list, so they are repacked only
        beside a backend without a host buffer type (Metal, RPC).
Rule 3: KV per device as the fit places it (`kv` Rule 5: window + ubatch rounded up to 256).
Rule 4: output buffer: n_vocab × 4 bytes for each sequence's logits row (llama-server's slots,
        `slots` Rule 5), in host memory (src/llama-context.cpp `output_reserve`: n_seq_max rows
        until a batch asks for more), in the host buffer type of the output layer's device
        (`Vulkan_Host`, `CUDA_Host` with the output layer on such a GPU; `CPU` otherwise).
Rule 5: compute buffer: ggml's allocator replayed over the graph of one ubatch with the
        runtime's reserved output rows (`compute_graph`, `graph_alloc`): exact for the dense and
        MoE transformer blocks it was checked on. With GPUs, llama.cpp's scheduler places each op
        and copies what a device reads from another (`sched`): every device that runs a part of
        the graph gets its own compute buffer — each GPU holding layers, a GPU that computes a
        prompt's large batches for host weights (op offload), and the host's, named after the
        first GPU's host buffer type (`CUDA_Host`, …; `backends` Rule 2).

Resident (the host's RSS at the end of a workload: a prompt of P tokens, G generated):
Rule 6: llama.cpp clears the KV and output buffers when it makes them (`ggml_backend_buffer_clear`):
        resident whole. Weights: the file is mapped with MAP_POPULATE (src/llama-mmap.cpp, unless
        `--lazy-mode` leaves a tensor over 4 GiB on disk) and what lies outside the tensors is
        unmapped after the load, so every mapped weight is resident, an untied embedding table
        too; loaded weights and repacked copies are written at load.
Rule 7: the compute buffer is allocated, never cleared: only what the graphs really run touch.
        The allocator is replayed over the graph of the prompt's largest ubatch (min(P, ubatch)
        tokens, one output row — logits are computed for the last token only) and of one
        decoded token, each at the cells the cache then spans (used cells padded to 256,
        `llama_kv_cache::get_n_kv`); the larger is resident. The reserved output rows
        (llama-completion and llama-cpp-python reserve 512: 512 MiB for a 262k vocabulary) are
        never written. A full context is P = ctx.
Rule 8: the CPU backend's work buffer for those graphs (`cpu_work`): with flash attention off it
        grows with the context (the F16 copy of the soft-max, cells × ubatch × heads).
Rule 9: llama-server and llama-cli (which runs the server in-process) keep context checkpoints
        of a sliding-window or recurrent model (`checkpoints`: two for a prompt beyond
        4 + n_ubatch tokens) and the prompt cache; llama-completion and llama-cpp-python keep
        neither (`serves_sessions`).
Rule 10: the process (binary, libraries, threads, tokenizer tables, and for llama-cpp-python the
        interpreter): `PROFILES[runtime].process` + `PROCESS_PER_TOKEN` · n_vocab, fitted as peak RSS −
        every other resident item (Rules 11–12's samplers and KV cells among them). llama-cli: 31,801 KiB
        + 137 bytes a vocabulary token, least squares on the 12 llama-cli runs of
        tests/data/llamacpp-logs (a copy of the shared logs) only; llama-server (the same engine
        without llama-cli's console) 19,081 KiB, the slope kept, the mean over its three idle
        runs only: smollm2 of tests/data/server-logs (smollm2_ctx4096_np1) and the runnable
        llama and gemma3 of tests/data/server-sessions (llama_idle, gemma_idle), 24.7 and
        15.8/15.3 MiB — a 260-token byte vocabulary holds ~15 MiB less than the llama-cli fit said;
        llama-completion 24,203 KiB and llama-cpp-python 59,074 KiB (the interpreter), each on
        its one short smollm2 run of tests/data/llamacpp-runs only, the slope kept. The 41 other
        runs of tests/data/llamacpp-runs (gemma3, the 8B-shaped model, full contexts, `-fa off`,
        `-lm none`, llama-server) are judged, not fitted: all within ±4.1 %.

The process's own host arrays that grow with the settings (itemized beside the buffers, in the verdict's host need
and in both ends of the band; llama.cpp's buffer lines are not theirs):
Rule 11: the sampler: `common_sampler::set_logits` (common/sampling.cpp, lines 130–161) fills `cur`, a
        vector of n_vocab `llama_token_data` (include/llama.h, lines 230–234: id int32, logit float, p float:
        12 bytes) kept with the sampler once it has sampled. llama-server keeps one sampler per slot
        (tools/server/server-context.cpp line 307 `slot.smpl`, made anew for each task at line 1764, its old
        one freed), so N slots hold N; llama-cli runs llama-server in a thread (tools/cli/cli-server.h
        `cli_server::start`) and holds one per slot too; llama-completion runs one sampler; llama-cpp-python
        samples through a `llama_sampler` chain (llama_cpp/_internals.py `LlamaSampler.sample`), whose own
        `cur` keeps the same n_vocab records between calls (src/llama-sampler.cpp lines 895–941,
        `llama_sampler_sample`): one.
Rule 12: the KV cells' metadata: each KV cache keeps, per stream, `llama_kv_cells` over its kv_size cells
        (src/llama-kv-cache.cpp line 144 `v_cells[s].resize(kv_size)`): `pos` (int32), `ext` (x, y, tok:
        three int32), `shift` (int32) and `seq`, a bitset of LLAMA_MAX_SEQ = 256 sequences
        (src/llama-kv-cells.h lines 499–522; src/llama-cparams.h line 8): 52 bytes a cell, over every cell its
        K and V tensors hold. A model with sliding-window layers runs two caches, the full one of n_ctx cells
        and the window's (src/llama-kv-cache-iswa.cpp lines 69–80: `slots` Rule 4), each with its cells;
        recurrent state keeps no per-token cells. What a filled cell adds to the `used` and `seq_pos` trees is
        left to the process (Rule 10).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.fit.server.checkpoints import CheckpointSettings, checkpoint_memory
from gguf_budget.core.fit.buffers.compute_graph import (
    GraphSettings, compute_nodes, input_bytes, k_only, k_rotation, v_rotation,
)
from gguf_budget.core.fit.buffers.compute_graph import approximate as approximate_graph
from gguf_budget.core.fit.buffers.cpu_work import work_bytes
from gguf_budget.core.fit.buffers.backends import BACKENDS, CPU_ALIGNMENT, BackendRules, GpuBackend, backend_of
from gguf_budget.core.fit.buffers.flash_attn_support import FlashAttn, attention_shapes, resolve
from gguf_budget.core.fit.buffers.graph_alloc import buffer_size
from gguf_budget.core.fit.placement.options import host_span, mapped_span
from gguf_budget.core.fit.buffers.placed_graph import device_buffers
from gguf_budget.core.fit.buffers.sched import SCHED_MAX_COPIES, Scheduler
from gguf_budget.core.fit.buffers.repack import Repack, repack_buffer
from gguf_budget.core.fit.runtime_types import (
    DeviceMemory, EngineSettings, Resident, Runtime, RuntimeMemory, SplitMode, Workload,
)
from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.fit.server.slots import SlotLayout
from gguf_budget.core.fit.types import DeviceLoad
from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf_budget.core.model.kv import ENGINE_CELL_PAD, KV_TYPES, KVType
from gguf_budget.core.model.layer_kinds import kind_counts
from gguf_budget.core.model.spec import LayerKind, ModelSpec

KiB = 1024
PROCESS_PER_TOKEN = 137
LOGIT_BYTES = 4
TOKEN_DATA_BYTES = 12
"""Rule 11: one `llama_token_data` (id, logit, p)."""
KV_CELL_BYTES = 4 + 3 * 4 + 4 + 256 // 8
"""Rule 12: one cell's `pos`, `ext`, `shift` and `seq` (52 bytes)."""


@dataclass(frozen=True)
class RuntimeProfile:
    """What differs by program: reserved output rows (None: one per ubatch token), n_batch, flash attention by
    default, whether it runs llama-server's context (`checkpoints`: its prompt cache and context checkpoints,
    `serves_sessions`), process."""

    outputs: int | None
    n_batch: int
    flash_attn: bool
    checkpoints: bool
    process: int


PROFILES: dict[Runtime, RuntimeProfile] = {  # process: Rule 10's fits (tests/test_peak_rss_band.py redoes them)
    Runtime.LLAMA_SERVER: RuntimeProfile(1, 2048, True, True, 19_081 * KiB),
    Runtime.LLAMA_CLI: RuntimeProfile(1, 2048, True, True, 31_801 * KiB),
    Runtime.LLAMA_COMPLETION: RuntimeProfile(None, 2048, True, False, 24_203 * KiB),
    Runtime.LLAMA_CPP_PYTHON: RuntimeProfile(None, 512, False, False, 59_074 * KiB),
}


def serves_sessions(runtime: Runtime) -> bool:
    """Rule 9: whether the program runs llama-server's context, and so keeps its prompt cache and context checkpoints:
    llama-server and llama-cli (common/arg.cpp gives `--cache-ram` and `--ctx-checkpoints` to LLAMA_EXAMPLE_SERVER and
    LLAMA_EXAMPLE_CLI only; tools/completion and the library make neither)."""
    return PROFILES[runtime].checkpoints


def reserved_outputs(s: EngineSettings) -> int:
    """Rule 5: the logits rows the compute graph is reserved for."""
    outputs = s.outputs if s.outputs is not None else PROFILES[s.runtime].outputs
    return min(outputs or s.ubatch, s.ubatch)


def flash_attn(s: EngineSettings) -> bool:
    """Whether the context is made for fused attention: the request's choice, else the runtime's default (`auto`
    counts as on until the devices resolve it, `attention`)."""
    return s.flash_attn if s.flash_attn is not None else PROFILES[s.runtime].flash_attn


def asked_flash_attn(s: EngineSettings) -> bool | None:
    """Rule 5: the request's on/off, else None where the runtime's default is llama.cpp's `auto`."""
    return s.flash_attn if s.flash_attn is not None else (None if PROFILES[s.runtime].flash_attn else False)


def _held_slots(devices: tuple[DeviceLoad, ...]) -> tuple[tuple[int, int] | None, ...]:
    """The slots each GPU of `devices` (the host first) holds: all a placement's backends read of its loads."""
    return tuple(d.slots for d in devices[1:])


def attention(model: ModelSpec, s: EngineSettings, kv_type: KVType, v_type: KVType | None = None,
              devices: tuple[DeviceLoad, ...] = (), gpus: tuple[GpuInfo, ...] = ()) -> FlashAttn:
    """Rule 5: `-fa auto` resolved over the layers each GPU holds (`flash_attn_support`); on the CPU alone auto is
    on. Kept per placement (`_resolved`): a tick asks it of every load it prices, at every ctx alike."""
    return _resolved(model, s, KVType(kv_type), v_type, _held_slots(devices), gpus)


@per_model(maxsize=256)
def _resolved(model: ModelSpec, s: EngineSettings, kv_type: KVType, v_type: KVType | None,
              slots: tuple[tuple[int, int] | None, ...], gpus: tuple[GpuInfo, ...]) -> FlashAttn:
    v = KVType(v_type if v_type is not None else kv_type)
    L = model.n_layer
    held: list[tuple[str, GpuBackend] | None] = [None] * L
    for d_slots, g in zip(slots, gpus, strict=False):
        backend = backend_of(g.vendor, s.gpu_backend, s.devices)
        device = (BACKENDS[backend].device_name(g.index, g.name), backend)
        if d_slots is not None:
            low, high = d_slots
            held[low:min(high, L)] = [device] * max(min(high, L) - low, 0)
    return resolve(asked_flash_attn(s), attention_shapes(model, KVType(kv_type).value, v.value), tuple(held),
                   v.quantized)


@per_model(maxsize=16)
def _window(model: ModelSpec) -> int:
    """The widest sliding window of the model's layers (0: none slides), kept per model."""
    return max((layer.window or 0 for layer in model.layers), default=0)


def _swa_cells(model: ModelSpec, ctx: int, layout: SlotLayout, s: EngineSettings) -> int:
    window = _window(model)
    if not window:
        return 0
    return layout.ctx_seq(ctx) if s.swa_full else layout.swa_cells(ctx, window, s.ubatch)


def graph_settings(model: ModelSpec, ctx: int, kv_type: KVType, s: EngineSettings,
                   v_type: KVType | None = None, fa: FlashAttn | None = None) -> GraphSettings:
    """The worst-case ubatch llama.cpp reserves for: min(ubatch, cells) tokens (a multiple of the sequences), its
    caches' cells per stream (`slots` Rules 2, 4 and 5: one stream, or one per sequence). K and V are rotated each
    by its own cache's type (src/llama-kv-cache.cpp: `attn_rot_k` for a quantized type_k, `attn_rot_v` for type_v),
    except through an absorbed MLA model's K-only input (`compute_graph.k_only`). `fa`: flash attention as the
    devices resolve it (`attention`; None: as on the CPU alone)."""
    layout = SlotLayout(s.n_seq, s.kv_unified)
    full = layout.ctx_seq(ctx)
    tokens = layout.reserve_tokens(ctx, s.ubatch)
    v = KVType(v_type if v_type is not None else kv_type)
    k_block, k_size = GGML_QUANT_SIZES[KV_TYPES[KVType(kv_type)]]
    v_block, v_size = GGML_QUANT_SIZES[KV_TYPES[v]]
    rotless = k_only(model)
    fa = fa if fa is not None else attention(model, s, kv_type, v_type)
    return GraphSettings(ubatch=tokens, outputs=min(reserved_outputs(s), tokens), flash_attn=fa.fused, v_flat=fa.v_flat,
                         full_cells=full,
                         swa_cells=_swa_cells(model, ctx, layout, s),
                         rot_k=0 if rotless else k_rotation(model.head_dim_k, KVType(kv_type).quantized),
                         rot_v=0 if rotless else v_rotation(model.head_dim_v, v.quantized), k_size=k_size / k_block,
                         v_size=v_size / v_block)


def _spanned(cells: int, tokens: int) -> int:
    """Rule 7: the cells a graph spans with `tokens` in the cache (`get_n_kv`)."""
    return min(cells, max(ENGINE_CELL_PAD, -(-tokens // ENGINE_CELL_PAD) * ENGINE_CELL_PAD)) if cells else 0


@per_model(maxsize=256)
def compute_buffer(model: ModelSpec, settings: GraphSettings) -> tuple[int, int]:
    """Rule 5: the buffer for the whole graph on one device, and the host's share with GPU layers
    (the graph inputs and the embeddings lookup: `graph_inputs`)."""
    return buffer_size(compute_nodes(model, settings)), graph_inputs(model, settings)


@per_model(maxsize=256)
def graph_inputs(model: ModelSpec, settings: GraphSettings) -> int:
    """Rule 7: the host's share of a graph with GPU layers: its inputs and the embeddings lookup — the inputs built,
    not the graph's blocks, and no allocator replayed."""
    return input_bytes(model, settings) + 4 * (model.n_embd or 0) * settings.ubatch


@per_model(maxsize=256)
def device_compute(model: ModelSpec, settings: GraphSettings, sched: Scheduler) -> tuple[int, ...]:
    """Rule 5 with GPUs: each backend's compute buffer (GPUs in order, the host last), kept for this exact placement;
    placements whose graphs are alike share one replay (`placed_graph`)."""
    return device_buffers(model, settings, sched)


def _override_device(buffer: str, names: list[str], rules: list[BackendRules]) -> int:
    """An `-ot` buffer name's backend index: a GPU's printed name or `PREFIXi`, else the host (CPU, CPU_REPACK, …)."""
    for b, name in enumerate(names):
        if buffer in (name, f"{rules[b].prefix}{b}"):
            return b
    if buffer.upper().startswith("CPU"):
        return len(names)
    raise RequestError(f"-ot names a buffer this machine has not: {buffer!r} (try CPU or {', '.join(names) or 'CPU'})")


@dataclass(frozen=True)
class Backends:
    """The scheduler's view of the fit's devices and the name of each compute buffer (GPUs, then the host's)."""

    sched: Scheduler
    names: tuple[str, ...]
    maps_file: tuple[bool, ...] = ()
    """Per GPU: its backend builds the model buffer from the mapped file (`backends` Rule 6)."""
    output: str = "CPU"
    """Rule 4: the output buffer's name: the host buffer type of the output layer's GPU, else the CPU's."""


def _too_large(model: ModelSpec, gpus: tuple[GpuInfo, ...], slot_device: list[int], cpu: int) -> list[tuple[str, int]]:
    """Rule 5: the output matrix stays on the CPU when it, or its product with llama.cpp's 512-row test batch, is
    larger than its GPU's largest tensor (llama-model-loader.cpp `weight_buft_supported`; Vulkan's `supports_op`
    refuses a tensor past `maxStorageBufferRange`)."""
    dev = slot_device[-1]
    limit = gpus[dev].max_buffer if dev < cpu else None
    if limit is None:
        return []
    table = next((t.nbytes for t in model.tensors if t.name == "output.weight"), None)
    table = table if table is not None else next((t.nbytes for t in model.tensors if t.name == "token_embd.weight"), 0)
    product = (model.n_vocab or 0) * 512 * 4
    return [(r"^output\.weight$", cpu)] if max(table, product) > limit else []


def backends_of(model: ModelSpec, settings: EngineSettings, devices: tuple[DeviceLoad, ...],
                gpus: tuple[GpuInfo, ...], all_offloaded: bool, repacked: frozenset[str] = frozenset()) -> Backends:
    """`sched`'s backends for a placement (`devices[0]` is the host, then one per GPU of `gpus`); `repacked`: the host
    weights in CPU_REPACK (`sched` Rule 3). Kept per placement (`_backends`): a tick asks it of every load it prices,
    at every ctx alike."""
    return _backends(model, settings, _held_slots(devices), gpus, all_offloaded, repacked)


@per_model(maxsize=256)
def _backends(model: ModelSpec, settings: EngineSettings, slots: tuple[tuple[int, int] | None, ...],
              gpus: tuple[GpuInfo, ...], all_offloaded: bool, repacked: frozenset[str]) -> Backends:
    L = model.n_layer
    rules = [BACKENDS[backend_of(g.vendor, settings.gpu_backend, settings.devices)] for g in gpus]
    names = [r.device_name(g.index, g.name) for r, g in zip(rules, gpus, strict=True)]
    cpu = len(gpus)
    slot_device = [cpu] * (L + 1)
    for b, d_slots in enumerate(slots):
        if d_slots is not None:
            for slot in range(*d_slots):
                slot_device[slot] = b
    overrides = (*_too_large(model, gpus, slot_device, cpu),
                 *((o.pattern, _override_device(o.buffer, names, rules)) for o in settings.overrides))
    used = [b for b in range(cpu) if b in slot_device] if settings.split_mode is SplitMode.NONE else list(range(cpu))
    pipeline = (len(used) > 1 and all_offloaded and settings.split_mode is SplitMode.LAYER and settings.kv_offload
                and not settings.overrides)
    sched = Scheduler(
        alignments=(*(r.alignment for r in rules), rules[0].host_alignment if rules else CPU_ALIGNMENT),
        offload=(*(r.offload if settings.op_offload and b in used else None for b, r in enumerate(rules)), None),
        slot_device=tuple(slot_device),
        kv_device=tuple(slot_device[il] if settings.kv_offload else cpu for il in range(L)),
        overrides=overrides, copies=SCHED_MAX_COPIES if pipeline else 1, kv_on_cpu=not settings.kv_offload,
        matmul_only=tuple(r.matmul_only for r in rules), pin_norms=all_offloaded, repacked=repacked,
        max_tensor=tuple(g.max_buffer for g in gpus),
    )
    host = rules[0].host_buffer if rules else "CPU"
    output = rules[slot_device[L]].host_buffer if slot_device[L] < cpu else "CPU"
    return Backends(sched, (*names, host), tuple(r.maps_file for r in rules), output)


def device_computes(model: ModelSpec, ctx: int | None, kv_type: KVType, settings: EngineSettings,
                    devices: tuple[DeviceLoad, ...], gpus: tuple[GpuInfo, ...],
                    all_offloaded: bool, v_type: KVType | None = None,
                    repacked: frozenset[str] = frozenset()) -> tuple[int | None, ...]:
    """Rule 5 per device, host first (as `devices`); None throughout when the context is unknown."""
    if not ctx:
        return (None,) * len(devices)
    gs = graph_settings(model, ctx, kv_type, settings, v_type, attention(model, settings, kv_type, v_type, devices, gpus))
    if not gpus:
        return (compute_buffer(model, gs)[0],)
    *on_gpus, on_host = device_compute(model, gs, backends_of(model, settings, devices, gpus, all_offloaded,
                                                              repacked).sched)
    return (on_host, *on_gpus)


def output_buffer(model: ModelSpec, settings: EngineSettings) -> int:
    """Rule 4: the host's logits rows, one per sequence."""
    return LOGIT_BYTES * (model.n_vocab or 0) * settings.n_seq


def sampler_bytes(model: ModelSpec, settings: EngineSettings) -> int:
    """Rule 11: every sampler's candidates: one per sequence where the program runs the server's slots, else one."""
    samplers = settings.n_seq if serves_sessions(settings.runtime) else 1
    return TOKEN_DATA_BYTES * (model.n_vocab or 0) * samplers


def kv_cell_bytes(model: ModelSpec, ctx: int, settings: EngineSettings) -> int:
    """Rule 12: the cells' metadata of every KV cache, every stream (0 for a model of recurrent layers alone)."""
    layout = SlotLayout(settings.n_seq, settings.kv_unified)
    if not any(n for kind, n in kind_counts(model).items() if kind is not LayerKind.RECURRENT):
        return 0
    cells = layout.total_cells(ctx) + _swa_cells(model, ctx, layout, settings) * layout.streams
    return KV_CELL_BYTES * cells


def process_bytes(model: ModelSpec, runtime: Runtime) -> int:
    """Rule 10."""
    return PROFILES[runtime].process + PROCESS_PER_TOKEN * (model.n_vocab or 0)


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What the resident figures of one workload need beside the workload itself."""

    model: ModelSpec
    ctx: int
    kv_type: KVType
    v_type: KVType | None
    settings: EngineSettings
    host: DeviceMemory
    host_layers: int
    repacked: frozenset[str]
    on_gpu: bool
    fa: FlashAttn
    base: GraphSettings
    """The reserved graph's settings (`graph_settings` at the run's ctx), made once for every workload of the run."""
    kv_cells: int
    """Rule 12 at the run's ctx, the same for every workload."""


def _graphs(run: _Run, w: Workload) -> tuple[tuple[int, int], ...]:
    """Rule 7: (tokens in the ubatch, tokens in the cache) of the prompt's largest ubatch and of a decoded token."""
    prompt = min(w.prompt, run.ctx)
    graphs = [(min(prompt, run.settings.ubatch), prompt)] if prompt else []
    if w.generated:
        graphs.append((1, min(prompt + w.generated, run.ctx)))
    return tuple(graphs) or ((1, 1),)


def _touched(run: _Run, rows: int, tokens: int) -> tuple[int, int]:
    """Rules 7–8 for one graph a workload runs: (the compute buffer it touches, the CPU's work buffer)."""
    base = run.base
    g = GraphSettings(ubatch=rows, outputs=1, flash_attn=base.flash_attn, full_cells=_spanned(base.full_cells, tokens),
                      swa_cells=_spanned(base.swa_cells, tokens), rot_k=base.rot_k, rot_v=base.rot_v, v_flat=base.v_flat)
    return _graph_touched(run.model, g, run.on_gpu, run.host_layers, run.settings.threads, run.repacked,
                          KV_TYPES[run.kv_type])


@per_model(maxsize=1024)
def _graph_touched(model: ModelSpec, g: GraphSettings, on_gpu: bool, host_layers: int, threads: int,
                   repacked: frozenset[str], kv: GGMLQuantizationType) -> tuple[int, int]:
    """`_touched`, kept per model by the graph alone: a band's short end and a session's requests run the same
    graphs at every ctx (only the full context's graph is new at a new ctx)."""
    compute = graph_inputs(model, g) if on_gpu else compute_buffer(model, g)[0]
    return compute, work_bytes(model, host_layers, g.ubatch, 1, g.full_cells, g.flash_attn, threads, repacked, kv)


def resident(run: _Run, w: Workload) -> Resident:
    """Rules 6–12 for one workload."""
    s, model = run.settings, run.model
    profile = PROFILES[s.runtime]
    touched = [_touched(run, rows, tokens) for rows, tokens in _graphs(run, w)]
    compute = max(c for c, _ in touched)
    work = max(w for _, w in touched)
    slots = CheckpointSettings(max_checkpoints=s.ctx_checkpoints, n_batch=s.batch or profile.n_batch,
                               n_ubatch=s.ubatch, swa_full=s.swa_full)
    checkpoints = checkpoint_memory(model, run.kv_type, min(w.prompt, run.ctx), slots) if serves_sessions(s.runtime) else 0
    host = run.host
    return Resident(
        workload=w, mapped_weights=host.mapped_weights, loaded_weights=host.loaded_weights, repack=host.repack,
        kv=host.kv or 0, output=host.output, compute=min(compute, host.compute or compute), work=work,
        checkpoints=checkpoints or 0, process=process_bytes(model, s.runtime), sampler=sampler_bytes(model, s),
        kv_cells=run.kv_cells,
    )


def runtime_memory(model: ModelSpec, ctx: int | None, kv_type: KVType, settings: EngineSettings,
                   snapshot_features: frozenset[str] | None, devices: tuple[DeviceLoad, ...], host_blocks: int,
                   output_on_host: bool, gpus: tuple[GpuInfo, ...] = (), all_offloaded: bool = False,
                   v_type: KVType | None = None, workloads: tuple[Workload, ...] = ()) -> RuntimeMemory:
    """Rules 1–12 for the placement the fit chose (`devices[0]` is the host, then one per GPU of `gpus`), and for
    each of `workloads`."""
    features = settings.cpu_features if settings.cpu_features is not None else snapshot_features
    host, *gpu_loads = devices
    backends = backends_of(model, settings, devices, gpus, all_offloaded) if gpus else None
    host_buffer = backends is not None and backends.names[-1] != "CPU"
    host_names = (frozenset(t.name for t in model.tensors if backends.sched.weight_device(t.name) == backends.sched.cpu)
                  if backends is not None and settings.overrides else None)
    repack = (repack_buffer(model, features, host_blocks, output_on_host, host_names)
              if features is not None and settings.repack and not host_buffer else Repack((), 0))
    fa = attention(model, settings, kv_type, v_type, devices, gpus)
    computes = device_computes(model, ctx, kv_type, settings, devices, gpus, all_offloaded, v_type,
                               frozenset(repack.tensors))
    on_gpu = any(d.weights or d.kv for d in gpu_loads)
    mapped = host_span(model, backends.sched, frozenset(repack.tensors)) if backends is not None else host.weights
    out = [DeviceMemory(
        name=host.name, mapped_weights=mapped if settings.mmap else 0,
        loaded_weights=0 if settings.mmap else host.weights - repack.source_bytes, repack=repack.nbytes, kv=host.kv,
        output=output_buffer(model, settings), compute=computes[0],
        buffer=backends.names[-1] if backends else "CPU", output_buffer=backends.output if backends else "CPU",
    )]
    for i, d in enumerate(gpu_loads, start=1):
        span = (mapped_span(model, backends.sched, i - 1)
                if backends is not None and settings.mmap and backends.maps_file[i - 1] else None)
        out.append(DeviceMemory(name=d.name, mapped_weights=span or 0,
                                loaded_weights=d.weights if span is None else 0, repack=0, kv=d.kv, output=0,
                                compute=computes[i], buffer=backends.names[i - 1] if backends else d.name))
    short = full = None
    along: tuple[Resident, ...] = ()
    if ctx and out[0].kv is not None and out[0].compute is not None:
        run = _Run(model=model, ctx=ctx, kv_type=KVType(kv_type), v_type=v_type, settings=settings, host=out[0],
                   host_layers=host_blocks, repacked=frozenset(repack.tensors), on_gpu=bool(on_gpu), fa=fa,
                   base=graph_settings(model, ctx, kv_type, settings, v_type, fa), kv_cells=kv_cell_bytes(model, ctx, settings))
        short, full = resident(run, settings.short), resident(run, Workload(prompt=ctx))
        along = tuple(resident(run, w) for w in workloads)
    return RuntimeMemory(settings=settings, devices=tuple(out), repacked_tensors=repack.tensors, cpu_features=features,
                         compute_approximate=approximate_graph(model) or bool(on_gpu), short=short, full=full,
                         along=along, attention=fa)

