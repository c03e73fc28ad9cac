"""What llama-server adds to a full load, in words and JSON: one source for `fit`'s text, its JSON and the panel.

Rule 1: one line per thing the server holds — slots, prompt cache, checkpoints, projector,
        draft — each with its bytes, where they sit, and the default it departs from.
Rule 2: figures are estimates when full (the cache and checkpoint lists at their limits), and say so.
Rule 4: when the worst case does not fit the host's room, the caps that would keep it in
        (`server_caps`), each with its cost and the command with it.
Rule 3: the session: its spelling (said as an assumption when the person gave none), what the
        server holds after each request (the trajectory, `server_band` Rule 3), its peak, and
        the worst case — "when every cache and checkpoint is full" — kept beside it; the line
        says which of the two the verdict counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gguf_budget.core.fit.server.prompt_cache import DEFAULT_CACHE_RAM_MIB, NO_LIMIT
from gguf_budget.core.fit.server.band import peak_session_rss, session_rss
from gguf_budget.core.fit.server.caps import worst_case_caps
from gguf_budget.core.fit.server.types import ServerLoad
from gguf_budget.core.fit.server.slots import AUTO_SLOTS
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.units import human_bytes


def _slots_text(s: ServerLoad, sampler: int) -> str:
    """The slots, their cells and output rows, and the samplers they keep in host RAM (`runtime_memory` Rule 11)."""
    n, lay = s.layout.n_seq, s.layout
    asked = "auto" if s.settings.n_parallel is None else str(s.settings.n_parallel)
    if n == 1:
        how = f"1 slot, up to {s.slot_ctx} tokens"
    elif lay.unified:
        how = (f"{n} slots sharing one unified KV cache of {s.n_ctx} cells: each slot up to {s.slot_ctx} tokens, "
               f"all together {s.n_ctx}")
    else:
        how = f"{n} slots, each with its own {s.ctx_seq} cells (up to {s.slot_ctx} tokens a slot)"
    return (f"{how} (-np {asked}; llama-server's default is auto: {AUTO_SLOTS} slots, unified KV); "
            f"compute graph and output buffer for {s.outputs} and {n} output row(s); "
            f"{'its sampler' if n == 1 else 'a sampler each'}: {human_bytes(sampler)} in host RAM")


def _cache_text(s: ServerLoad) -> str:
    mib = s.cache_ram_mib
    if mib == 0:
        return "off (--cache-ram 0)"
    why = ("chosen by this tool: one context's worth, within what the host has left" if s.cache_chosen
           else "as asked")
    limit = "no limit: at most n_ctx tokens of states" if mib == NO_LIMIT else f"--cache-ram {mib}"
    return (f"{human_bytes(s.prompt_cache)} in host RAM when full ({limit}, {why}; llama-server's default is "
            f"{DEFAULT_CACHE_RAM_MIB} MiB)")


def _checkpoint_text(s: ServerLoad) -> str:
    if s.checkpoint == 0:
        return "none: this model rolls back without context checkpoints (no sliding-window or recurrent layers)"
    per = s.settings.ctx_checkpoints
    if per == 0:
        return "off (--ctx-checkpoints 0)"
    return (f"context checkpoints {human_bytes(s.checkpoints)} in host RAM when full: {per} per slot × {s.layout.n_seq} slot(s) × "
            f"{human_bytes(s.checkpoint)} each")


def server_rows(e: FitEstimate) -> list[tuple[str, str]]:
    """Rule 1's lines for `fit`'s text and the side panel."""
    s = e.server
    if s is None:
        return []
    rows = [("Slots", _slots_text(s, e.devices[0].sampler)), ("Cache RAM", "prompt cache: " + _cache_text(s)),
            ("Checkpoint", _checkpoint_text(s))]
    p = s.projector
    if p is not None:
        rows.append(("Projector", f"{p.spec.path} ({p.spec.projector_type}) on {p.device}: weights "
                                  f"{human_bytes(p.weights)} + compute {human_bytes(p.compute)} for one "
                                  f"{p.image_width}x{p.image_height} image, which takes {p.image_tokens} tokens of "
                                  "context"))
    d = s.draft
    if d is not None:
        where = ", ".join(f"{name} {human_bytes(w)} + KV {human_bytes(dict(d.kv).get(name))}"
                          for name, w in d.weights if w or dict(d.kv).get(name))
        rows.append(("Draft", f"{d.path}: {d.gpu_layers} of {d.n_slots} layers on GPU (-ngld); {where}; "
                              f"compute {human_bytes(d.compute)} on {d.compute_device}, output "
                              f"{human_bytes(d.output)}; samplers {human_bytes(d.sampler)} + KV cells' metadata "
                              f"{human_bytes(d.kv_cells)} in host RAM"))
    rows += _session_rows(e)
    rss = e.peak_rss_server
    if rss is not None and s.host_rss:
        rows.append(("Worst case", f"≈ {human_bytes(rss)} resident when every cache and checkpoint is full: the "
                                   f"context filled, the prompt cache and every slot's checkpoints at their limits "
                                   f"({human_bytes(s.host_rss)} of it the server's own, in host RAM)"))
    return rows


WORST_CASE = "when every cache and checkpoint is full"


def _session_rows(e: FitEstimate) -> list[tuple[str, str]]:
    s = e.server
    if s is None or s.session is None:
        return []
    spec, peak = s.session.spec, s.session.peak
    top = peak_session_rss(_rss(e))
    said = f"{spec.text} (assumed: a typical chat; --session to describe yours)" if spec.assumed else spec.text
    refused = s.session.refused
    rows = [("Session", f"{said}: {len(s.session.steps)} requests, cache and checkpoints {human_bytes(peak.held)} at "
                        f"most (after request {s.session.steps.index(peak) + 1})"
                        + (f", resident ≈ {human_bytes(top)} at most" if top is not None else "")
                        + (f"; {refused} request(s) exceed a slot's context and are refused" if refused else ""))]
    counted = ("the worst case (--worst-case), " + WORST_CASE if s.settings.worst_case
               else f"the session's peak, {human_bytes(peak.held)}; the worst case, {WORST_CASE}, is "
                    f"{human_bytes(s.worst_held)} (--worst-case to judge on it)")
    rows.append(("Counted", f"the verdict counts {counted}"))
    for cap in worst_case_caps(e):
        rows.append(("Cap", f"{' '.join(cap.args)} keeps the worst case within the host's room; cost: {cap.cost}"))
    return rows


def _rss(e: FitEstimate) -> tuple[int | None, ...]:
    return session_rss(e.memory, e.server) if e.memory is not None and e.server is not None else ()


@dataclass(frozen=True)
class SessionChart:
    """What the window's small trajectory chart draws: the resident memory after each request (None: refused),
    and the worst case as a line above it."""

    rss: tuple[int | None, ...]
    worst: int | None
    caption: str


def session_chart(e: FitEstimate) -> SessionChart | None:
    """Rule 3 as a chart; None without a session (no context, or a fact missing)."""
    s, rss = e.server, _rss(e)
    top = peak_session_rss(rss)
    if s is None or s.session is None or top is None:
        return None
    return SessionChart(rss=rss, worst=e.peak_rss_server,
                        caption=f"resident after each of {len(rss)} requests ({s.session.spec.text}): at most "
                                f"{human_bytes(top)}; the worst case {human_bytes(e.peak_rss_server)}")


def session_dict(e: FitEstimate) -> dict[str, Any] | None:
    """Rule 3 in JSON: the `server.session` key of `fit --json`."""
    s = e.server
    if s is None or s.session is None:
        return None
    trace, rss = s.session, _rss(e)
    steps = [{"request": i + 1, "conversation": st.request.conversation + 1, "turn": st.request.turn + 1,
              "prompt_tokens": st.prompt_tokens, "generated_tokens": st.request.generated, "images": st.request.images,
              "slot": None if st.refused else st.slot, "refused": st.refused, "cache_entries": st.cache_entries,
              "cache_bytes": st.cache_bytes, "checkpoints": st.checkpoint_count, "checkpoint_bytes": st.checkpoint_bytes,
              "held": st.held, "rss": rss[i] if i < len(rss) else None}
             for i, st in enumerate(trace.steps)]
    return {"spec": trace.spec.text, "assumed": trace.spec.assumed, "counted": "worst_case" if s.settings.worst_case
            else "session_peak", "peak_request": trace.steps.index(trace.peak) + 1, "peak_held": trace.peak.held,
            "peak_rss": peak_session_rss(rss), "worst_case_held": s.worst_held,
            "worst_case_rss": e.peak_rss_server, "worst_case": WORST_CASE,
            "caps": [{"flag": c.flag, "value": c.value, "cost": c.cost} for c in worst_case_caps(e)],
            "trajectory": steps}


def server_dict(e: FitEstimate) -> dict[str, Any] | None:
    """The `server` key of `fit --json` (the README lists its keys)."""
    s = e.server
    if s is None:
        return None
    p, d = s.projector, s.draft
    return {
        "slots": {"asked": s.settings.n_parallel, "n_seq": s.layout.n_seq, "kv_unified": s.layout.unified,
                  "n_ctx": s.n_ctx, "ctx_seq": s.ctx_seq, "slot_ctx": s.slot_ctx, "outputs": s.outputs},
        "prompt_cache": {"cache_ram_mib": s.cache_ram_mib, "chosen": s.cache_chosen,
                         "default_mib": DEFAULT_CACHE_RAM_MIB, "full_bytes": s.prompt_cache},
        "checkpoints": {"per_slot": s.settings.ctx_checkpoints, "one_bytes": s.checkpoint, "full_bytes": s.checkpoints},
        "projector": None if p is None else {
            "path": p.spec.path, "type": p.spec.projector_type, "device": p.device, "weights": p.weights,
            "compute": p.compute, "image": [p.image_width, p.image_height], "image_tokens": p.image_tokens,
            "approximate": p.spec.approximate},
        "draft": None if d is None else {
            "path": d.path, "gpu_layers": d.gpu_layers, "n_layer": d.n_layer, "kv_type": d.kv_type,
            "weights": dict(d.weights), "kv": dict(d.kv), "compute": d.compute, "compute_device": d.compute_device,
            "output": d.output, "sampler": d.sampler, "kv_cells": d.kv_cells},
        "held": dict(s.held),
        "host_rss": s.host_rss,
        "peak_rss_server": e.peak_rss_server,
        "session": session_dict(e),
    }
