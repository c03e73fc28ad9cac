"""What llama.cpp would hold, in words and JSON: one source for `fit`'s text, its JSON and the side panel.

Rule 1: per device, the mapped (file-backed) weights apart from the anonymous items: loaded
        weights, repacked copies, KV, output, compute, process — and their sum.
Rule 2: the host's predicted peak RSS is the two together; what the machine must really have
        is the anonymous part (mapped pages are clean and can be dropped and read back).
Rule 3: the reserves are a safety margin on top, shown apart; the verdict's basis is said in
        words (`runtime_types.VERDICT_BASIS`), as is the revision the rules follow.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.fit.runtime_types import DeviceMemory, RuntimeMemory
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.llama_cpp import LLAMA_CPP_SOURCE
from gguf_budget.core.units import human_bytes


def _device_dict(d: DeviceMemory, reserve: int) -> dict[str, Any]:
    return {"name": d.name, "mapped_weights": d.mapped_weights, "loaded_weights": d.loaded_weights,
            "repack": d.repack, "kv": d.kv, "output": d.output, "compute": d.compute, "process": d.process,
            "anonymous": d.anonymous, "file_backed": d.mapped_weights, "total": d.total, "reserve": reserve}


def runtime_dict(fit: FitEstimate) -> dict[str, Any] | None:
    """The `runtime_memory` key of `fit --json` (Rules 1–3); None without a context."""
    m = fit.memory
    if m is None:
        return None
    s = m.settings
    reserves = {d.name: d.reserve for d in fit.devices}
    return {
        "engine": LLAMA_CPP_SOURCE,
        "settings": {"ubatch": s.ubatch, "outputs": s.outputs, "flash_attn": s.flash_attn, "swa_full": s.swa_full,
                     "mmap": s.mmap, "repack": s.repack,
                     "cpu_features": sorted(m.cpu_features) if m.cpu_features is not None else None},
        "devices": [_device_dict(d, reserves.get(d.name, 0)) for d in m.devices],
        "peak_rss": m.peak_rss,
        "anonymous": m.host.anonymous,
        "file_backed": m.host.mapped_weights,
        "repacked_tensors": len(m.repacked_tensors),
        "compute_approximate": m.compute_approximate,
        "verdict_basis": m.verdict_basis,
    }


def _items(d: DeviceMemory) -> str:
    parts = [("loaded weights", d.loaded_weights), ("repacked", d.repack), ("KV", d.kv), ("output", d.output),
             ("compute", d.compute), ("process", d.process)]
    return ", ".join(f"{name} {human_bytes(v)}" for name, v in parts if v is None or v)


def _features(m: RuntimeMemory) -> str:
    if not m.settings.repack:
        return "repacking off"
    if m.cpu_features is None:
        return "CPU features unknown: no repacked copies predicted"
    return f"{len(m.repacked_tensors)} tensors repacked for {', '.join(sorted(m.cpu_features)) or 'no listed features'}"


def runtime_rows(fit: FitEstimate) -> list[tuple[str, str]]:
    """Rows for `fit`'s text and the side panel (Rules 1–3); none without a context."""
    m = fit.memory
    if m is None:
        return []
    s = m.settings
    how = (f"ubatch {s.ubatch}, {s.outputs} output row(s), flash attention {'on' if s.flash_attn else 'off'}, "
           f"{'mmap' if s.mmap else 'no mmap (-lm none)'}{', full-size SWA cache' if s.swa_full else ''}")
    rows = [("llama.cpp", f"would hold (per {LLAMA_CPP_SOURCE}; {how}; {_features(m)}):")]
    reserves = {d.name: d.reserve for d in fit.devices}
    for d in m.devices:
        mapped = f"{human_bytes(d.mapped_weights)} mapped weights (file-backed) + " if d.mapped_weights else ""
        rows.append((f"  {d.name}", f"{mapped}{human_bytes(d.anonymous)} anonymous ({_items(d)}); "
                                    f"reserve {human_bytes(reserves.get(d.name, 0))} on top"))
    approx = " (compute approximate)" if m.compute_approximate else ""
    rows.append(("Peak RSS", f"≈ {human_bytes(m.peak_rss)} predicted for the llama.cpp process{approx}; "
                             f"must have {human_bytes(m.host.anonymous)} anonymous, the "
                             f"{human_bytes(m.host.mapped_weights)} mapped weights can be paged back in"))
    rows.append(("Judged on", m.verdict_basis))
    return rows
