"""What llama.cpp would hold, in words and JSON: one source for `fit`'s text, its JSON and the side panel.

Rule 1: per device, what llama.cpp reserves: the mapped (file-backed) weights apart from the
        anonymous buffers — loaded weights, repacked copies, KV, output, compute — and their sum;
        each device's compute buffer under the name llama.cpp prints for it (`CUDA0`, `CUDA_Host`, …).
Rule 2: the host's predicted peak RSS is a band for the runtime assumed (llama-server unless
        chosen): after a short prompt, and once the context has filled — the figure to plan on
        (`peak_rss_short`, `peak_rss_full`), each itemized by what is resident (the touched part
        of the compute buffer, the work buffer, context checkpoints, the process, its samplers and KV
        cells' metadata); what the
        machine must really have is the anonymous part (mapped pages are clean and can be
        dropped and read back).
        The full end is `load_tier.peak_memory`'s one figure (for llama-server, with the cache and checkpoints its
        verdict counts), the same in `fit`'s text, its JSON (`peak_memory`) and the side panel.
Rule 3: the reserves are a safety margin on top, shown apart; the verdict's basis is said in
        words (`runtime_types.VERDICT_BASIS`), as is the revision the rules follow.
Rule 4: flash attention as asked and as the devices resolve it: `on`, `off`, `auto → on`, or `auto → off on
        CUDA0 (no kernel for K 192/V 128 at GQA 1)` (`flash_attn_support`); the JSON's `flash_attn` is the
        resolved answer, `flash_attn_asked` the request and `flash_attn_why` the refusal.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.fit.runtime_types import DeviceMemory, Resident, RuntimeMemory
from gguf_budget.core.fit.runtime_memory import flash_attn, reserved_outputs
from gguf_budget.core.fit.load_tier import peak_memory
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.llama_cpp import LLAMA_CPP_SOURCE
from gguf_budget.core.units import human_bytes


def _device_dict(d: DeviceMemory, reserve: int) -> dict[str, Any]:
    return {"name": d.name, "mapped_weights": d.mapped_weights, "loaded_weights": d.loaded_weights,
            "repack": d.repack, "kv": d.kv, "output": d.output, "compute": d.compute, "compute_buffer": d.buffer,
            "anonymous": d.anonymous, "file_backed": d.mapped_weights, "total": d.total, "reserve": reserve}


def resident_dict(r: Resident | None) -> dict[str, Any] | None:
    """One end of the band, item by item (bytes), with its workload and sums."""
    if r is None:
        return None
    return {"prompt_tokens": r.workload.prompt, "generated_tokens": r.workload.generated,
            "mapped_weights": r.mapped_weights, "loaded_weights": r.loaded_weights, "repack": r.repack, "kv": r.kv,
            "output": r.output, "compute": r.compute, "work": r.work, "checkpoints": r.checkpoints,
            "process": r.process, "sampler": r.sampler, "kv_cells": r.kv_cells, "server": r.server,
            "server_mapped": r.server_mapped, "anonymous": r.anonymous,
            "total": r.total}


def flash_attn_words(m: RuntimeMemory) -> str:
    """Rule 4."""
    a = m.attention
    if a is None:
        return "on" if flash_attn(m.settings) else "off"
    if a.asked is not None:
        return "on" if a.asked else "off"
    if a.fused:
        return "auto → on"
    return f"auto → off{_refusal(m)}"


def _refusal(m: RuntimeMemory) -> str:
    a = m.attention
    if a is None or a.refused_by is None or a.shape is None:
        return ""
    return f" on {a.refused_by} (no kernel for {a.shape.words()})"


def runtime_dict(fit: FitEstimate) -> dict[str, Any] | None:
    """The `runtime_memory` key of `fit --json` (Rules 1–3); None without a context."""
    m = fit.memory
    if m is None:
        return None
    s = m.settings
    reserves = {d.name: d.reserve for d in fit.devices}
    fa = m.attention
    asked = fa.asked if fa is not None else flash_attn(s)
    return {
        "engine": LLAMA_CPP_SOURCE,
        "runtime": s.runtime.value,
        "settings": {"ubatch": s.ubatch, "outputs": reserved_outputs(s),
                     "flash_attn": fa.fused if fa is not None else flash_attn(s),
                     "flash_attn_asked": "auto" if asked is None else "on" if asked else "off",
                     "flash_attn_why": _refusal(m).removeprefix(" ") or None,
                     "swa_full": s.swa_full, "mmap": s.mmap, "repack": s.repack, "threads": s.threads,
                     "cpu_features": sorted(m.cpu_features) if m.cpu_features is not None else None},
        "devices": [_device_dict(d, reserves.get(d.name, 0)) for d in m.devices],
        "peak_rss": m.peak_rss,
        "peak_rss_short": m.peak_rss_short,
        "peak_rss_full": m.peak_rss,
        "short": resident_dict(m.short),
        "full": resident_dict(m.full),
        "anonymous": m.full.anonymous if m.full else None,
        "file_backed": m.host.mapped_weights,
        "repacked_tensors": len(m.repacked_tensors),
        "compute_approximate": m.compute_approximate,
        "verdict_basis": m.verdict_basis,
    }


def _items(d: DeviceMemory) -> str:
    parts = [("loaded weights", d.loaded_weights), ("repacked", d.repack), ("KV", d.kv), ("output", d.output),
             (f"compute ({d.buffer})", d.compute)]
    return ", ".join(f"{name} {human_bytes(v)}" for name, v in parts if v is None or v)


def _features(m: RuntimeMemory) -> str:
    if not m.settings.repack:
        return "repacking off"
    if m.cpu_features is None:
        return "CPU features unknown: no repacked copies predicted"
    return f"{len(m.repacked_tensors)} tensors repacked for {', '.join(sorted(m.cpu_features)) or 'no listed features'}"


def _grows(short: Resident, full: Resident) -> str:
    """What a filled context adds over a short prompt, item by item."""
    grown = full.growth_over(short)
    parts = [("compute touched", grown.compute), ("work buffer", grown.work), ("context checkpoints", grown.checkpoints)]
    return ", ".join(f"{name} +{human_bytes(v)}" for name, v in parts if v > 0) or "nothing"


def _full_end(fit: FitEstimate, full: Resident, filled: str) -> str:
    """The full end's one figure (`load_tier.peak_memory`), `filled` (when), and what it counts beyond the filled
    context."""
    peak = peak_memory(fit)
    counted = "" if not peak.counted_over_filled else (f", with the cache and checkpoints the verdict counts "
                                                       f"({human_bytes(peak.counted_over_filled)} over the filled "
                                                       f"context's)")
    return f"≈ {human_bytes(peak.full or full.total)} {filled}{counted}"


def peak_rss_rows(fit: FitEstimate) -> list[tuple[str, str]]:
    """Rule 2 in words: both ends of the band, for `fit`'s text (the same figures as the side panel's `band_rows`)."""
    m = fit.memory
    assert m is not None
    if m.full is None or m.short is None:
        return [(PEAK, f"unknown ({m.settings.runtime}): the context, and so the KV cache, is unknown")]
    approx = " (compute approximate)" if m.compute_approximate else ""
    return [
        (PEAK, f"{_full_end(fit, m.full, f'once the {m.full.workload.prompt:,}-token context has filled')} "
               f"(the figure to plan on) · ≈ {human_bytes(m.short.total)} after a short "
               f"prompt — {m.settings.runtime}{approx}"),
        ("", f"a full context adds {_grows(m.short, m.full)}; must have {human_bytes(m.full.anonymous)} anonymous, "
             f"the {human_bytes(m.full.mapped_weights)} mapped weights can be paged back in"),
    ]


PEAK = "Peak RSS"
BAND_FULL = "Peak RSS, full context"
BAND_SHORT = "Peak RSS, short prompt"


def band_rows(fit: FitEstimate) -> tuple[tuple[str, str], ...]:
    """Rule 2 for the side panel: the band's two ends, one row each (the full end first: it is the one to plan on)."""
    m = fit.memory
    if m is None or m.full is None or m.short is None:
        unknown = "unknown: without a context the KV cache is unknown"
        return (BAND_FULL, unknown), (BAND_SHORT, unknown)
    approx = ", compute approximate" if m.compute_approximate else ""
    return (
        (BAND_FULL, f"{_full_end(fit, m.full, f'once {m.full.workload.prompt:,} tokens fill the context')} "
                    f"({m.settings.runtime}{approx}; the figure to plan on)"),
        (BAND_SHORT, f"≈ {human_bytes(m.short.total)} after a {m.short.workload.prompt:,}-token prompt and "
                     f"{m.short.workload.generated:,} generated"),
    )


def runtime_rows(fit: FitEstimate) -> list[tuple[str, str]]:
    """Rows for `fit`'s text and the side panel (Rules 1–3); none without a context."""
    m = fit.memory
    if m is None:
        return []
    s = m.settings
    how = (f"ubatch {s.ubatch}, {reserved_outputs(s)} output row(s) reserved, flash attention "
           f"{flash_attn_words(m)}, {'mmap' if s.mmap else 'no mmap (-lm none)'}"
           f"{', full-size SWA cache' if s.swa_full else ''}")
    rows = [("llama.cpp", f"{s.runtime} would reserve (per {LLAMA_CPP_SOURCE}; {how}; {_features(m)}):")]
    reserves = {d.name: d.reserve for d in fit.devices}
    for d in m.devices:
        mapped = f"{human_bytes(d.mapped_weights)} mapped weights (file-backed) + " if d.mapped_weights else ""
        rows.append((f"  {d.name}", f"{mapped}{human_bytes(d.anonymous)} anonymous ({_items(d)}); "
                                    f"reserve {human_bytes(reserves.get(d.name, 0))} on top"))
    rows += peak_rss_rows(fit)
    rows.append(("Judged on", m.verdict_basis))
    return rows
