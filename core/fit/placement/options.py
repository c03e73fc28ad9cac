"""Which device holds each weight and each layer's KV when llama.cpp's placement options are set, and what the host maps.

Pure. Source: `core.llama_cpp.LLAMA_CPP_SOURCE`, src/llama-model.cpp `llama_model_base::load_tensors` and
src/llama-model-loader.cpp.

Rule 1: `-ot PATTERN=BUFFER` keeps every tensor whose name the pattern finds (`std::regex_search`,
        the first matching override wins) in that buffer — a GPU by its printed name, or the host
        (`CPU`) — whatever its layer's slot (`sched.Scheduler.weight_device`); each device's weights
        are the sum of what it then holds (the tied output table, duplicated onto the output slot's
        device, counted there too).
Rule 2: `-nkvo` keeps every layer's KV cache in host RAM (llama-kv-cache.cpp `llama_kv_cache`:
        `offload ? model.dev_layer(il) : cpu`).
Rule 3: with mmap the host's model buffer (`CPU_Mapped`), and a Metal GPU's (`MTL0_Mapped`,
        `backends` Rule 6), is the span of the file its tensors cover
        (`llama_model_loader::get_mapping_range`: from the first of its tensors' data to the end of
        the last), so a tensor of another device lying between two of its tensors is mapped too,
        and a trailing output matrix on a GPU is not the host's. Tensor data follow the directory
        order, each aligned to the file's alignment (32 bytes unless `general.alignment` says
        otherwise); llama-quantize writes the tensors outside blocks first (`weight_name_comparer`:
        by block, then name), so `token_embd` lies between a GPU's output matrix and its blocks.
        The span is taken per buffer type (`get_mapping_range` over one context's tensors;
        `load_tensors` maps only the device's default buffer type), so the host's repacked weights,
        which live in CPU_REPACK, are not in it: with `-ot exps=CPU` and repacked experts the host
        maps only the span of what stays in its CPU buffer (`token_embd`, …).
Rule 4: with no `-ot` and nothing kept elsewhere a tensor's device is its slot's, so the span is taken over each
        slot's extent (kept per model: its first tensor's data to its last one's end) — a new placement's span
        looks at its slots, not at every tensor (an 80-layer model's 724, at each new GPU-layer count of a drag).
        The data lie in file order without overlap, so the first start and the last end are the span's ends.
"""

from __future__ import annotations

from gguf_budget.core.fit.buffers.sched import Scheduler, weight_slot
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import ModelSpec

GGUF_ALIGNMENT = 32
def _padded(n: int, alignment: int = GGUF_ALIGNMENT) -> int:
    return -(-n // alignment) * alignment


@per_model(maxsize=16)
def _layout(model: ModelSpec) -> tuple[tuple[str, int, int, int | None], ...]:
    """(name, data offset, bytes, `weight_slot`) of every tensor in file order, walked once per model: a slider tick
    re-places the model many times, and each walk of an 80-layer model's 700 tensors showed in the tick."""
    out, offset = [], 0
    for t in model.tensors:
        out.append((t.name, offset, t.nbytes, weight_slot(t.name, model.n_layer + 1)))
        offset += _padded(t.nbytes)
    return tuple(out)


def device_weights(model: ModelSpec, sched: Scheduler) -> tuple[int, ...]:
    """Rule 1: the bytes each backend holds (GPUs in order, the host last)."""
    out = [0] * (sched.cpu + 1)
    layout = _layout(model)
    names = {name for name, _, _, _ in layout}
    for name, _, nbytes, slot in layout:
        out[sched.slot_weight_device(name, slot)] += nbytes
    if "output.weight" not in names:  # tied: the output slot holds a copy of the embeddings table
        table = next((nbytes for name, _, nbytes, _ in layout if name == "token_embd.weight"), 0)
        dev = sched.weight_device("output.weight")
        if dev != sched.cpu:
            out[dev] += table
    return tuple(out)


@per_model(maxsize=256)
def mapped_span(model: ModelSpec, sched: Scheduler, backend: int, elsewhere: frozenset[str] = frozenset()) -> int:
    """Rules 3–4: the bytes of the file a backend that maps it (the host, a Metal GPU) holds; `elsewhere`: its tensors
    kept in another of its buffer types (the host's repacked copies)."""
    if not sched.overrides and not elsewhere:
        ends = [(start, end) for slot, start, end in _slot_extents(model)
                if (sched.cpu if slot is None else sched.slot_device[slot]) == backend]
        return max(end for _, end in ends) - min(start for start, _ in ends) if ends else 0
    held = [(offset, nbytes) for name, offset, nbytes, slot in _layout(model)
            if sched.slot_weight_device(name, slot) == backend and name not in elsewhere]
    if not held:
        return 0
    return held[-1][0] + held[-1][1] - held[0][0]


@per_model(maxsize=16)
def _slot_extents(model: ModelSpec) -> tuple[tuple[int | None, int, int], ...]:
    """Rule 4: each layer slot's (slot, its first tensor's data offset, its last tensor's end) in file order."""
    out: dict[int | None, tuple[int, int]] = {}
    for _, offset, nbytes, slot in _layout(model):
        out[slot] = (out[slot][0] if slot in out else offset, offset + nbytes)
    return tuple((slot, start, end) for slot, (start, end) in out.items())


def host_span(model: ModelSpec, sched: Scheduler, repacked: frozenset[str] = frozenset()) -> int:
    """Rule 3 for the host: the span of the weights left in its CPU buffer, the repacked ones (`repack`) not among
    them."""
    return mapped_span(model, sched, sched.cpu, repacked)
