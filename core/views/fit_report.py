"""What `hw` and `fit` show: one dict for JSON and a text view of the same numbers.

The text keeps the three claims apart in words: storage (file size), admission (an estimate
against one snapshot) and runtime evidence (none until a real run measured something).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from gguf_budget.core.fit.ctx.auto_ctx import AutoFit, FitCtxReason
from gguf_budget.core.fit.load_tier import PAGING, load_tier, peak_memory
from gguf_budget.core.fit.types import DeviceLoad, FitEstimate, FitVerdict, Strategy
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.views.command_view import command_dict, command_rows
from gguf_budget.core.machine.gpu import MEMORY_WORDS, VENDOR_NAMES, GpuInfo
from gguf_budget.core.machine.gpus import is_driver_detail
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.units import counted, human_bandwidth, human_bytes
from gguf_budget.core.views.machine_view import NO_GPU_WORDS, device_total, held_words, need_parts
from gguf_budget.core.views.table import aligned_text
from gguf_budget.core.views.runtime_report import runtime_dict, runtime_rows
from gguf_budget.core.views.server_report import server_dict, server_rows

VERDICT_WORDS: dict[FitVerdict, str] = {
    FitVerdict.FITS_GPU: "fits on GPU",
    FitVerdict.FITS_SPLIT: "fits split",
    FitVerdict.CPU_ONLY: "fits CPU-only",
    FitVerdict.DOES_NOT_FIT: "does not fit",
    FitVerdict.UNKNOWN: "unknown",
}


def _when(epoch: float) -> str | None:
    """UTC wall time; None for a machine typed in without a time (captured_at 0)."""
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if epoch > 0 else None


def snapshot_dict(s: HardwareSnapshot) -> dict[str, Any]:
    return {
        "captured_at": s.captured_at,
        "captured_at_utc": _when(s.captured_at),
        "source": s.source,
        "host_total": s.host_total,
        "host_available": s.host_available,
        "cgroup_limit": s.cgroup_limit,
        "swap_total": s.swap_total,
        "host_error": s.host_error,
        "gpus": [asdict(g) for g in s.gpus],
        "gpu_error": s.gpu_error,
    }


def gpu_text(g: GpuInfo) -> str:
    """One GPU in a line: who made it, which memory, free of total, bandwidth, and what could not be read."""
    kind = f"{VENDOR_NAMES[g.vendor]}, {MEMORY_WORDS[g.memory]}{', integrated' if g.integrated else ''}"
    used = f" ({human_bytes(g.used)} used)" if g.used is not None else ""
    rate = f"; bandwidth {human_bandwidth(g.bandwidth)}" if g.bandwidth else ""
    why = f" — {g.reason}" if g.reason else ""
    return f"{g.name} ({kind}): {human_bytes(g.free)} free of {human_bytes(g.total)}{used}{rate}{why}"


def _gpu_lines(s: HardwareSnapshot, detail: bool) -> list[tuple[str, str]]:
    rows = [(f"GPU {g.index}", gpu_text(g)) for g in s.gpus]
    if not s.gpus:
        if s.source is SnapshotSource.HYPOTHETICAL or not is_driver_detail(s.gpu_error):
            none = "none in this hypothetical machine" if s.source is SnapshotSource.HYPOTHETICAL else "none"
            rows.append(("GPU", f"{none}: {s.gpu_error}" if s.gpu_error else none))
        else:
            rows.append(("GPU", f"{NO_GPU_WORDS} ({s.gpu_error})" if s.gpu_error and detail else NO_GPU_WORDS))
    elif s.gpu_error:
        rows.append(("GPU errors", s.gpu_error))
    return rows


def _snapshot_rows(s: HardwareSnapshot, gpu_detail: bool = False) -> list[tuple[str, str]]:
    what = "hypothetical machine (typed in, not measured)" if s.source is SnapshotSource.HYPOTHETICAL else "probed"
    host = s.host_error or f"{human_bytes(s.host_available)} available of {human_bytes(s.host_total)} total"
    when = _when(s.captured_at)
    rows = [("Snapshot", f"{when} — {what}" if when else what), ("Host RAM", host)]
    if s.cgroup_limit is not None:
        rows.append(("Container", f"memory cgroup limit {human_bytes(s.cgroup_limit)} (applied to the RAM figures)"))
    if s.swap_total is not None:
        rows.append(("Swap", f"{human_bytes(s.swap_total) if s.swap_total else 'none'} — never counted as RAM"))
    return rows + _gpu_lines(s, gpu_detail)


def snapshot_text(s: HardwareSnapshot, gpu_detail: bool = False) -> str:
    """The machine in rows; `gpu_detail` (for `hw`) adds why a probe found no GPU (`machine_view` Rule 5)."""
    return aligned_text(_snapshot_rows(s, gpu_detail))


def _device_dict(e: FitEstimate, d: DeviceLoad) -> dict[str, Any]:
    """A pool's need in its four lines (weights, KV, compute, reserve) and the free and total they are judged against."""
    return {"name": d.name, "label": d.label, "available": d.available, "total": device_total(e, d),
            "reserve": d.reserve, "usable": d.usable, "weights": d.weights, "kv": d.kv, "compute": d.compute,
            "need": d.need, "shortfall": d.shortfall, "shared": d.shared, "server": d.server, "sampler": d.sampler,
            "kv_cells": d.kv_cells,
            "slots": list(d.slots) if d.slots is not None else None}


def _strategy_dict(e: FitEstimate, m: Strategy | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {"name": m.name, "description": m.description, "verdict": m.verdict, "host_exact": m.host_exact,
            "devices": [_device_dict(e, d) for d in m.devices], "shortfall": m.shortfall, "gpu_layers": m.gpu_layers,
            "n_cpu_moe": m.n_cpu_moe, "command": command_dict(m.command if m.verdict.admitted else None)}


def fit_dict(e: FitEstimate) -> dict[str, Any]:
    c = e.claims
    return {
        "snapshot": snapshot_dict(e.snapshot),
        "reserves": {"host": e.reserves.host, "gpu": e.reserves.gpu,
                     "per_device": {d.name: d.reserve for d in e.devices}},
        "tensor_split": list(e.request.tensor_split) if e.request.tensor_split else None,
        "ctx": e.kv.ctx,
        "kv_type": e.kv.kv_type, "v_type": (e.request.v_type or e.kv.kv_type).value,
        "n_layer": e.n_layer,
        "gpu_layers": e.gpu_layers,
        "auto_gpu_layers": e.auto_gpu_layers,
        "output_on_gpu": e.output_on_gpu,
        "weights": asdict(e.weights),
        "kv": {k: v for k, v in asdict(e.kv).items() if k not in ("kv_type", "ctx")},
        "devices": [_device_dict(e, d) for d in e.devices],
        "verdict": e.verdict,
        "refused": e.refused,
        "shortfall": e.shortfall,
        "unknowns": list(e.unknowns),
        "notes": list(e.notes),
        "moe_cpu_experts": _strategy_dict(e, e.moe),
        "moe_n_cpu": _strategy_dict(e, e.moe_offload),
        "command": command_dict(e.recommended, e.request.engine.runtime),
        "runtime": e.request.engine.runtime.value,
        "peak_rss_short": peak_memory(e).short,
        "peak_rss_full": peak_memory(e).full,
        "peak_memory": peak_dict(e),
        "runtime_memory": runtime_dict(e),
        "server": server_dict(e),
        "claims": {
            "file_size": {"bytes": c.file_size, "header_only": c.header_only,
                          "meaning": "storage only: says nothing about RAM or VRAM"},
            "admission": {"verdict": c.admission, "against_snapshot": _when(c.captured_at),
                          "snapshot_source": c.snapshot_source,
                          "meaning": "an estimate against free memory at that moment, not a guarantee"},
            "runtime_evidence": c.runtime_evidence,
        },
    }


def peak_dict(e: FitEstimate) -> dict[str, Any]:
    """`fit --json`'s `peak_memory`: the one peak figure per end of the band (`load_tier.peak_memory`), its tier."""
    peak, judged = peak_memory(e), load_tier(e)
    return {"runtime": e.request.engine.runtime.value, "short": peak.short, "full": peak.full,
            "tier": None if judged is None else judged.tier.value, "why": None if judged is None else judged.why}


PLACEMENT: dict[FitVerdict, str] = {
    FitVerdict.FITS_GPU: "all {L} blocks and the output layer offloaded",
    FitVerdict.FITS_SPLIT: "the output layer and {n} of {L} blocks on GPU, the rest in host RAM (slower)",
    FitVerdict.CPU_ONLY: "everything in host RAM (slowest)",
}


def verdict_text(e: FitEstimate) -> str:
    """The verdict in one line; the CLI and the GUI side panel both say it this way. A load that fits only by
    paging its mapped weights back in says so instead of "fits" (`load_tier` Rule 3); its other tiers are said
    beside it (`fit`'s Tier line, the window's answers)."""
    L = e.n_layer
    short = "; ".join(short_reason(d) for d in e.devices if d.shortfall)
    if e.verdict is FitVerdict.DOES_NOT_FIT:
        return f"does not fit — {e.refused or short}"
    if e.verdict is FitVerdict.UNKNOWN:
        return "unknown — " + "; ".join(e.unknowns)
    where = PLACEMENT[e.verdict].format(L=L, n=e.offloaded_blocks)
    judged = load_tier(e)
    if judged is not None and judged.why.startswith(PAGING):
        return f"{judged.why} — {where}"
    return f"{VERDICT_WORDS[e.verdict]} — {where}"


def _ceiling_words(choice: AutoFit) -> str:
    """What the ceiling is: the trained context, the cap below it, or the default for a file without one."""
    if choice.trained is None:
        return "the default" if choice.ceiling == DEFAULT_CTX else "the cap"
    return "the trained" if choice.ceiling == choice.trained else "the capped"


def ctx_choice_text(choice: AutoFit) -> str:
    """The full load's ctx and why (`fit.ctx.auto_ctx`), in words the CLI's fit and the window's full-load line share."""
    ctx, ceiling = f"ctx {choice.ctx:,}", f"{_ceiling_words(choice)} {choice.ceiling:,}"
    if choice.reason is FitCtxReason.ASKED:
        room = choice.image_room
        return f"{ctx} ({choice.asked:,} as asked + {room:,} for one image in each slot)" if room else \
            f"{ctx} (as asked)"
    if choice.reason is FitCtxReason.CEILING:
        return f"{ctx} ({ceiling.removeprefix('the ')})" if choice.trained is None else \
            f"{ctx} ({'the trained context' if choice.ceiling == choice.trained else 'the cap'})"
    if choice.reason is FitCtxReason.SHRUNK:
        return f"{ctx} ({ceiling} does not fit)"
    below = f"; {ceiling} does not fit" if choice.ctx < choice.ceiling else ""
    return f"{ctx} (the least llama.cpp's fit shrinks the context to before it gives up GPU layers{below})"


def short_reason(d: DeviceLoad) -> str:
    """Why a pool does not fit, in one line: 'gpu1 short by 412 MiB: weights … + KV … + compute 742 MiB > … usable'."""
    return f"{d.name} short by {human_bytes(d.shortfall)}: {need_parts(d)} > {human_bytes(d.usable)} usable"


def _need_rows(e: FitEstimate) -> list[tuple[str, str]]:
    """Each pool's need and its four lines — weights, KV, compute (under llama.cpp's name), reserve — against its free
    and total memory (`devices` Rule 4)."""
    buffers = {d.name: m.buffer for d, m in zip(e.devices, e.memory.devices, strict=False)} if e.memory else {}
    rows = []
    for d in e.devices:
        short = f" — short by {human_bytes(d.shortfall)}" if d.shortfall else ""
        held = held_words(d)
        rows += [(f"Need, {d.name}", f"needs {human_bytes(d.need)} of {human_bytes(d.usable)} usable "
                                     f"({human_bytes(d.available)} free − {human_bytes(d.reserve)} reserve; "
                                     f"{human_bytes(device_total(e, d))} total){short}"),
                 ("  weights", human_bytes(d.weights)), ("  KV", human_bytes(d.kv)),
                 ("  compute", human_bytes(d.compute) + (f" ({buffers[d.name]})" if d.name in buffers else "")),
                 ("  reserve", human_bytes(d.reserve))]
        rows += [("  beside", " + ".join(held))] if held else []
    return rows


def _moe_rows(m: Strategy | None) -> list[tuple[str, str]]:
    if m is None:
        return []
    short = "".join(f", {name} short by {human_bytes(b)}" for name, b in m.shortfall.items())
    rows = [("MoE option", f"{m.description}: {VERDICT_WORDS[m.verdict]}{short}")]
    return rows + [(f"  {d.name}", f"needs {human_bytes(d.need)} of {human_bytes(d.usable)} usable") for d in m.devices]


def offload_rows(m: Strategy | None) -> list[tuple[str, str]]:
    """The MoE expert offload (the smallest --n-cpu-moe), beside the plain split."""
    if m is None or m.n_cpu_moe is None:
        return []
    short = ", ".join(f"{name} short by {human_bytes(b)}" for name, b in m.shortfall.items())
    if m.shortfall:
        head = f"even --n-cpu-moe {m.n_cpu_moe} (every expert in host RAM) does not fit: {short}"
    elif m.n_cpu_moe == 0:
        head = "not needed: every layer and every expert fits on the GPUs (--n-cpu-moe 0)"
    else:
        head = f"smallest that fits: --n-cpu-moe {m.n_cpu_moe} — {VERDICT_WORDS[m.verdict]}; {m.description}"
    rows = [("MoE offload", head)]
    return rows + [(f"  {d.name}", f"needs {human_bytes(d.need)} of {human_bytes(d.usable)} usable") for d in m.devices]


def _cache_types(e: FitEstimate) -> str:
    """`q8_0`, or `K q8_0, V f16` where -ctv differs from -ctk."""
    v = e.request.v_type
    return str(e.kv.kv_type) if v is None or v == e.kv.kv_type else f"K {e.kv.kv_type}, V {v}"


def fit_text(e: FitEstimate, choice: AutoFit | None = None) -> str:
    """The fit as an aligned table; with `choice` (`fit.ctx.auto_ctx`), the verdict says at which ctx and why."""
    w, kv, L = e.weights, e.kv, e.n_layer
    auto = "unknown" if e.auto_gpu_layers is None else str(e.auto_gpu_layers)
    out_where = "output layer on GPU" if e.output_on_gpu else "output layer in host RAM"
    rows = _snapshot_rows(e.snapshot) + [
        ("Reserves", "; ".join(f"{d.name} {human_bytes(d.reserve)}" for d in e.devices) + " (assumptions)"),
        ("Context", f"{kv.ctx} tokens → {kv.cells} cells, {_cache_types(e)} cache"),
        ("GPU layers", f"{e.gpu_layers} (-ngl; {L} blocks + output layer = {e.n_slots}; auto {auto}); {out_where}"),
        ("Weights", f"by file share (file size × GPU layers / blocks): GPU {human_bytes(w.gpu_coarse)}, "
                    f"host {human_bytes(w.host_coarse)}"),
        ("", f"exact inventory: GPU {human_bytes(w.gpu_exact)}, host {human_bytes(w.host_exact)}"),
        ("KV cache", f"FP16 lower bound {human_bytes(kv.lower_bound)} over {kv.attention_layers} attention layers "
                     f"({kv.swa_layers} sliding); engine {human_bytes(kv.engine)} "
                     f"(GPU {human_bytes(kv.gpu)}, host {human_bytes(kv.host)})"),
    ]
    if kv.recurrent_layers:
        rows.append(("Recurrent", f"{counted(kv.recurrent_layers, 'layer')}, state {human_bytes(kv.recurrent_state)} (F32, fixed)"))
    at = "" if choice is None else f" at {ctx_choice_text(choice)}"
    rows += server_rows(e) + _need_rows(e) + runtime_rows(e) + [("Verdict", verdict_text(e) + at)]
    rows += offload_rows(e.moe_offload) + _moe_rows(e.moe)
    rows += command_rows(e)
    rows += [("Claims", f"file size {human_bytes(w.file_bytes)} is storage only; the verdict is an admission "
                        "estimate against the snapshot above; runtime evidence: none (nothing measured)")]
    rows += [("Note", n) for n in e.notes]
    return aligned_text(rows)
