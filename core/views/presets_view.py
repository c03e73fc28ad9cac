"""The preset table as people read it: `fit --preset list`, `hw --presets` and the machine editor's tooltip."""

from __future__ import annotations

from gguf_budget.core.machine.gpu import VENDOR_NAMES
from gguf_budget.core.machine.presets import GB_S, PRESETS, GiB, Preset
from gguf_budget.core.views.table import aligned_text


def _kind(p: Preset) -> str:
    return "machine, unified memory" if p.unified else f"{VENDOR_NAMES[p.vendor]} GPU"


def presets_text() -> str:
    """One line per row: name, memory, bandwidth, kind and the spec page it comes from."""
    return aligned_text([(p.name, f"{p.memory // GiB} GiB, {p.bandwidth // GB_S} GB/s ({_kind(p)}) — {p.source}")
                         for p in PRESETS])
