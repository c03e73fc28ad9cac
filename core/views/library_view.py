"""What `gguf-budget library` and the Library dock show: one row per model, the same words for both.

Rule 1: a row names the model as its store does, its store, file type, size, then the full-load
        verdict with its GPU layers, and the budget plan's outcome with ctx and pinned layers.
        An unreadable file's row says why instead.
Rule 2: JSON carries the same facts in exact bytes and plain words; untrusted names are escaped in
        text (JSON is escaped by its encoder).
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.library.assess import Assessment, LibrarySettings
from gguf_budget.core.library.scan import LibraryEntry, Scan
from gguf_budget.core.machine.snapshot import SnapshotSource
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import counted, human_bytes
from gguf_budget.core.views.fit_report import VERDICT_WORDS
from gguf_budget.core.views.table import aligned_lines

COLUMNS = ("Model", "Store", "Type", "Size", "Full load", "Budget plan")


def full_load_cell(a: Assessment | None) -> str:
    if a is None:
        return "—"
    if a.fit_verdict is None:
        return f"cannot tell: {safe_text(a.error or '')}"
    ctx = "" if a.fit_ctx is None else f" at ctx {a.fit_ctx:,}"
    largest = "" if a.fit_ctx is None else \
        ("; no ctx fits" if a.max_ctx is None else f"; largest ctx that fits {a.max_ctx:,}")
    return f"{VERDICT_WORDS[FitVerdict(a.fit_verdict)]}, {a.gpu_layers or 0}/{a.n_layer} layers on GPU{ctx}{largest}"


def budget_plan_cell(a: Assessment | None) -> str:
    if a is None or a.plan_outcome is None:
        return "—"
    ctx = "" if a.plan_ctx is None else f", ctx {a.plan_ctx:,}"
    return f"{a.plan_outcome}, {a.pinned}/{a.n_layer} pinned{ctx}"


def row_cells(entry: LibraryEntry[Assessment]) -> tuple[str, ...]:
    """Rule 1: the cells of one row, in `COLUMNS` order."""
    size = "?" if entry.size_bytes is None else human_bytes(entry.size_bytes)
    name = safe_text(entry.name)
    if entry.error is not None:
        return (name, entry.kind.value, "—", size, f"unreadable: {safe_text(entry.error)}", "—")
    kind = safe_text(entry.file_type or "?") + (f" ({entry.shards} shards)" if entry.shards > 1 else "")
    return (name, entry.kind.value, kind, size, full_load_cell(entry.assessment), budget_plan_cell(entry.assessment))


def library_text(result: Scan[Assessment], settings: LibrarySettings) -> str:
    machine = "the hypothetical machine" if settings.machine.source is SnapshotSource.HYPOTHETICAL else "this machine"
    budget = settings.budget
    head = [f"{counted(len(result.entries), 'model')} in {counted(len(result.roots), 'folder')} "
            f"(full load on {machine}; budget plan at {budget})"]
    head += [f"  {r.kind.value}: {safe_text(str(r.path))}" for r in result.roots]
    if not result.complete:
        head.append("  (scan cancelled: the list is incomplete)")
    body = aligned_lines([COLUMNS, *(row_cells(e) for e in result.entries)]) if result.entries \
        else ["no GGUF models found — add a folder with --add DIR"]
    return "\n".join([*head, "", *body])


def library_dict(result: Scan[Assessment], settings: LibrarySettings) -> dict[str, Any]:
    return {
        "budget_bytes": settings.budget.cli_bytes,
        "ctx_cap": settings.ctx_cap,
        "machine": settings.machine.source,
        "complete": result.complete,
        "folders": [{"store": r.kind.value, "path": str(r.path)} for r in result.roots],
        "entries": [_entry_dict(e) for e in result.entries],
    }


def _entry_dict(e: LibraryEntry[Assessment]) -> dict[str, Any]:
    judged = e.assessment.as_dict() if e.assessment is not None else \
        {"full_load": None, "budget_plan": None, "assessment_error": None}
    return {"name": e.name, "store": e.kind.value, "path": e.path, "shards": e.shards, "size_bytes": e.size_bytes,
            "error": e.error, "architecture": e.architecture, "file_type": e.file_type, "n_params": e.n_params,
            **judged}
