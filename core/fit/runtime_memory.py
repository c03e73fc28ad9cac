"""Predict what llama.cpp holds, per device: weights, repacked copies, KV, output, compute, process.

Pure; follows `core.llama_cpp.LLAMA_CPP_SOURCE`. Checked against real runs in
tests/data/llamacpp-logs (tests/test_runtime_memory.py).

Rule 1: weights as the placement puts them (`DeviceLoad.weights`); the host's are mapped
        (file-backed) with mmap, loaded (anonymous) without — and then less the repacked
        tensors, which live only in CPU_REPACK (`repack` Rule 3); a GPU's are loaded.
Rule 2: CPU_REPACK (`repack`): copies of the host's repackable weights for the CPU's features
        (the request's set, else the snapshot's; none predicted when neither is known).
Rule 3: KV per device as the fit places it (`kv` Rule 5: window + ubatch rounded up to 256).
Rule 4: output buffer: n_vocab × 4 bytes for the one sequence's logits row, in host memory.
Rule 5: compute buffer: ggml's allocator replayed over the graph of one ubatch
        (`compute_graph`, `graph_alloc`): exact for the dense and MoE transformer blocks it was
        checked on; with GPU layers the graph runs on the first GPU holding layers and the host
        keeps the inputs and the embeddings lookup (an approximation).
Rule 6: the process (binary, libraries, threads, tokenizer tables, sampler arrays):
        `PROCESS_BASE` + `PROCESS_PER_TOKEN` · n_vocab, calibrated on llama-cli runs of the
        pinned build as peak RSS − every buffer (tests/data/llamacpp-logs).
Rule 7: peak RSS = every host item, mapped weights included: a CPU run touches every weight.
"""

from __future__ import annotations

from functools import lru_cache

from gguf_budget.core.fit.compute_graph import GraphSettings, compute_nodes, k_rotation, v_rotation
from gguf_budget.core.fit.compute_graph import approximate as approximate_graph
from gguf_budget.core.fit.graph_alloc import buffer_size
from gguf_budget.core.fit.repack import Repack, repack_buffer
from gguf_budget.core.fit.runtime_types import DeviceMemory, EngineSettings, RuntimeMemory
from gguf_budget.core.fit.types import DeviceLoad
from gguf_budget.core.model.kv import ENGINE_CELL_PAD, KVType, engine_cells
from gguf_budget.core.model.spec import ModelSpec

MiB = 1024 * 1024
PROCESS_BASE = 17 * MiB + MiB // 2
PROCESS_PER_TOKEN = 128
LOGIT_BYTES = 4
QUANTIZED_KV = frozenset({KVType.Q8_0, KVType.Q4_0})


def graph_settings(model: ModelSpec, ctx: int, kv_type: KVType, s: EngineSettings) -> GraphSettings:
    """The worst-case ubatch llama.cpp reserves for: min(ubatch, cells) tokens, its caches' cells."""
    full = engine_cells(ctx)
    window = max((layer.window or 0 for layer in model.layers), default=0)
    swa = full if s.swa_full else -(-min(full, window + s.ubatch) // ENGINE_CELL_PAD) * ENGINE_CELL_PAD
    tokens = min(s.ubatch, full)
    quantized = kv_type in QUANTIZED_KV
    return GraphSettings(tokens, min(s.outputs, tokens), s.flash_attn, full, swa if window else 0,
                         k_rotation(model.head_dim_k, quantized), v_rotation(model.head_dim_v, quantized))


@lru_cache(maxsize=64)
def compute_buffer(model: ModelSpec, settings: GraphSettings) -> tuple[int, int]:
    """Rule 5: the buffer for the whole graph on one device, and the host's share with GPU layers
    (the graph inputs and the embeddings lookup)."""
    nodes = compute_nodes(model, settings)
    inputs = sum(n.nbytes for n in nodes if n.is_input) + 4 * (model.n_embd or 0) * settings.ubatch
    return buffer_size(nodes), inputs


def process_bytes(model: ModelSpec) -> int:
    """Rule 6."""
    return PROCESS_BASE + PROCESS_PER_TOKEN * (model.n_vocab or 0)


def runtime_memory(model: ModelSpec, ctx: int | None, kv_type: KVType, settings: EngineSettings,
                   snapshot_features: frozenset[str] | None, devices: tuple[DeviceLoad, ...], host_blocks: int,
                   output_on_host: bool) -> RuntimeMemory:
    """Rules 1–7 for the placement the fit chose (`devices[0]` is the host)."""
    features = settings.cpu_features if settings.cpu_features is not None else snapshot_features
    repack = (repack_buffer(model, features, host_blocks, output_on_host) if features is not None and settings.repack
              else Repack((), 0))
    whole, inputs = compute_buffer(model, graph_settings(model, ctx, kv_type, settings)) if ctx else (None, None)
    on_gpu = [i for i, d in enumerate(devices) if i and (d.weights or d.kv)]
    host, *gpus = devices
    out = [DeviceMemory(
        name=host.name, mapped_weights=host.weights if settings.mmap else 0,
        loaded_weights=0 if settings.mmap else host.weights - repack.source_bytes, repack=repack.nbytes, kv=host.kv,
        output=LOGIT_BYTES * (model.n_vocab or 0),
        compute=inputs if on_gpu else whole,
        process=process_bytes(model),
    )]
    for i, d in enumerate(gpus, start=1):
        gpu_compute = (whole if on_gpu and i == on_gpu[0] else 0) if whole is not None else None
        out.append(DeviceMemory(d.name, 0, d.weights, 0, d.kv, 0, gpu_compute, 0))
    return RuntimeMemory(settings, tuple(out), repack.tensors, features,
                         approximate_graph(model) or bool(on_gpu))
