"""What a fit estimate cannot know, and what its reader should be told — in words.

Rule 1: a missing fact (block count, context length, a layer's KV heads or dims, recurrent
        state sizes, host memory) is listed as unknown and makes the verdict unknown.
Rule 2: notes say how numbers were read: a header-only file's size, GPU layers clamped to
        L + 1 or dropped for want of a GPU, a context beyond the trained one, swap not counted,
        tied embeddings copied to the GPU, a quantized V cache needing flash attention, compute
        buffers left to the reserves (itemized beside the verdict, `runtime_memory`).
Rule 3: notes say which GPUs the fit leaves out (integrated beside a discrete one, memory
        unknown), which it takes at their total (no usage published), which share the host's
        pool, and a user tensor split.
"""

from __future__ import annotations

from gguf_budget.core.fit.placement.devices import GpuSetup
from gguf_budget.core.fit.placement.gpu_split import Placement
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.gpu import MEMORY_WORDS, GpuMemory
from gguf_budget.core.machine.gpus import is_driver_detail
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.layer_kinds import kind_counts
from gguf_budget.core.model.spec import LayerKind, ModelSpec
from gguf_budget.core.units import human_bytes

ATTENTION_FACTS = ("n_embd", "n_head", "n_head_kv", "head_dim_k", "head_dim_v")


def fit_unknowns(model: ModelSpec, snapshot: HardwareSnapshot, ctx: int | None) -> tuple[str, ...]:
    """Facts the verdict needs but does not have, in words (Rule 1); never replaced by 0."""
    out = [snapshot.host_error] if snapshot.host_error else []
    if "n_layer" in model.unknown:
        out.append("block count: the file does not give it")
    if ctx is None:
        out.append("context length: the file does not give it (pass a context size)")
    kinds = kind_counts(model)
    n_unknown = kinds[LayerKind.UNKNOWN]
    if n_unknown:
        missing = ", ".join(f for f in ATTENTION_FACTS if f in model.unknown) or "attention facts"
        out.append(f"KV cache of {n_unknown} layer(s): the file lacks {missing}")
    if model.recurrent_state_bytes is None and kinds[LayerKind.RECURRENT]:
        out.append("recurrent state: the file lacks the SSM/RWKV state sizes")
    return tuple(out)


def gpu_notes(snapshot: HardwareSnapshot, setup: GpuSetup) -> list[str]:
    """Which GPUs the fit leaves out and why, and how it read the ones it uses (Rule 3)."""
    used = {g.index for g in setup.gpus} | {g.index for g in setup.unreadable}
    notes = [f"{g.label} is integrated: llama.cpp uses integrated GPUs only when there is no discrete one"
             for g in snapshot.gpus if g.index not in used]
    notes += [f"{g.label}: memory unknown ({g.reason or 'not readable'}); llama.cpp would use it, this estimate "
              "cannot place layers on it" for g in setup.unreadable]
    notes += [f"{g.label}: free memory not published; its total, {human_bytes(g.total)}, is taken as free"
              for g in setup.gpus if g.free is None and g.memory != GpuMemory.UNIFIED]
    notes += [f"{g.label} uses {MEMORY_WORDS[g.memory]}: what it holds is host RAM too, so the host's need includes "
              "it and each byte is counted once" for g in setup.gpus if g.shares_host_memory]
    if setup.tensor_split and len(setup.gpus) > 1:
        shares = ",".join(f"{x:g}" for x in setup.tensor_split)
        notes.append(f"tensor split -ts {shares}: layers are shared out by these proportions, not by free memory")
    return notes


def fit_notes(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest, p: Placement,
              setup: GpuSetup) -> tuple[str, ...]:
    """What a reader should know to read the numbers right (Rules 2–3)."""
    L = model.n_layer
    asked = request.gpu_layers
    notes = []
    if model.incomplete:
        notes.append("incomplete file? it stops inside its tensor data (a partial download?): "
                     "sizes are those of the complete file its header describes")
    elif model.header_only:
        notes.append("header-only file: sizes are those of the complete file its header describes")
    if asked is not None and asked > L + 1 and setup.gpus:
        notes.append(f"{asked} GPU layers asked; llama.cpp offloads at most {L + 1} ({L} blocks + output layer)")
    trained = model.context_length
    if request.ctx is not None and trained and request.ctx > trained:
        notes.append(f"context {request.ctx} is beyond the trained context of {trained}: the model may answer "
                     "poorly past it")
    if not snapshot.gpus:
        why = " found" if is_driver_detail(snapshot.gpu_error) else f" ({snapshot.gpu_error})"
        asked_text = f"{asked} GPU layers asked, none offloaded — " if asked else ""
        notes.append(f"{asked_text}no GPU{why}: everything is placed in host RAM")
    notes += gpu_notes(snapshot, setup)
    if snapshot.swap_total:
        notes.append(f"swap ({human_bytes(snapshot.swap_total)}) is not counted: paging to SSD is no substitute for RAM")
    if (request.v_type or request.kv_type).quantized:
        notes.append("a quantized V cache needs flash attention in llama.cpp (-fa)")
    if p.output_on_gpu and model.tied_embeddings:
        notes.append("tied embeddings: the GPU holds a copy of token_embd as the output layer; the host keeps its own")
    notes.append("repacked copies and the process are itemized under 'llama.cpp'; the verdict leaves them to the "
                 "reserves (each device's compute buffer it counts, and the host's samplers and KV cells' metadata)")
    return tuple(notes)
