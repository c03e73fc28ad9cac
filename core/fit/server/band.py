"""llama-server's holdings in the peak-RSS band, and its resident memory after each request of a session.

Pure; called by `estimate` once the model's own band (`runtime_memory`) and the server's load
(`server`) are known; for llama-server and llama-cli (which runs the server in-process) only.

Rule 1: both ends of the band carry what the server loads at start: the draft's mapped
        weights, its repacked copies, KV, output and compute buffers, and the projector's
        weights and compute buffer when they sit in host RAM (`ServerLoad.band_extra`,
        `band_mapped`) — so "peak" never leaves out something loaded before the first request.
Rule 2: the band's full end fills every slot: each slot's context leaves its prompt's
        checkpoints (`checkpoints` Rules 2–4, at the slot's context), so the full end counts
        them × slots; the short end is one short prompt in one slot, as before.
Rule 3: after request i of a session the server holds: the band's fixed items (weights, KV,
        output, repack, the process, Rule 1's extras), the compute and work buffers touched by
        the widest of requests 1…i (`runtime_memory` Rule 7: allocated, never given back), and
        the most cache entries and checkpoints held after any of requests 1…i (`session` Rule
        5): what llama-server frees — an erased checkpoint, an entry evicted or loaded back — stays
        with the allocator (measured: a slot's erased checkpoints leave RSS where it was).
"""

from __future__ import annotations

from dataclasses import replace

from gguf_budget.core.fit.server.checkpoints import CheckpointSettings, checkpoint_memory
from gguf_budget.core.fit.server.checkpoints import DEFAULT_BATCH
from gguf_budget.core.fit.runtime_memory import serves_sessions
from gguf_budget.core.fit.runtime_types import EngineSettings, Resident, RuntimeMemory, Workload
from gguf_budget.core.fit.server.types import ServerLoad
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec


def session_workloads(load: ServerLoad) -> tuple[Workload, ...]:
    """Rule 3's graphs: each request's prompt (every token the slot then spans) and what it generates, once each."""
    if load.session is None:
        return ()
    return tuple(dict.fromkeys(Workload(prompt=s.prompt_tokens, generated=s.request.generated)
                               for s in load.session.steps))


def _extras(r: Resident, load: ServerLoad, checkpoints: int) -> Resident:
    """`r` with the server's extras and `checkpoints`; itself where it holds them already (a band's workloads mostly
    do: no draft, no projector, no checkpoints)."""
    if (r.server, r.server_mapped, r.checkpoints) == (load.band_extra, load.band_mapped, checkpoints):
        return r
    return replace(r, server=load.band_extra, server_mapped=load.band_mapped, checkpoints=checkpoints)


def server_band(memory: RuntimeMemory, load: ServerLoad, model: ModelSpec, kv_type: KVType,
                engine: EngineSettings) -> RuntimeMemory:
    """Rules 1–2 on the band `runtime_memory` made for one sequence."""
    short, full = memory.short, memory.full
    if short is None or full is None or load.slot_ctx is None or not serves_sessions(engine.runtime):
        return memory
    cp = CheckpointSettings(max_checkpoints=load.settings.ctx_checkpoints, n_batch=engine.batch or DEFAULT_BATCH,
                            n_ubatch=engine.ubatch, swa_full=engine.swa_full)
    per_slot = checkpoint_memory(model, kv_type, load.slot_ctx, cp)
    filled = full.checkpoints if per_slot is None else per_slot * load.layout.n_seq
    return replace(memory, short=_extras(short, load, short.checkpoints), full=_extras(full, load, filled),
                   along=tuple(_extras(r, load, 0) for r in memory.along))


def session_rss(memory: RuntimeMemory, load: ServerLoad) -> tuple[int | None, ...]:
    """Rule 3: the predicted resident memory after each request (None for one llama-server refuses)."""
    short = memory.short
    along = {r.workload: r for r in memory.along}
    if load.session is None or short is None or not along:
        return ()
    fixed = short.total - short.compute - short.work - short.checkpoints
    touched = held = 0
    out = list[int | None]()
    for step in load.session.steps:
        if step.refused:
            out.append(None)
            continue
        r = along[Workload(prompt=step.prompt_tokens, generated=step.request.generated)]
        touched, held = max(touched, r.compute + r.work), max(held, step.held)
        out.append(fixed + touched + held)
    return tuple(out)


def peak_session_rss(rss: tuple[int | None, ...]) -> int | None:
    """Rule 3: the most a session's server is predicted resident after any request (None when no request was)."""
    return max((r for r in rss if r is not None), default=None)
