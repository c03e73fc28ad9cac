"""What `quants` prints and the Quants dock shows: one column table, one dict for JSON, one text.

Rule 1: `COLUMNS` is the ladder's table — header, the cell a person reads, and the value it
        sorts by — so the CLI table and the window's sortable table are the same cells.
Rule 2: every row says it is priced, not downloaded; the size is the file llama-quantize would
        write (the source's header plus aligned tensor data), never a measured file.
Rule 3: a verdict is the full-load admission estimate at the ladder's ctx; a plan is the budget
        plan at the request's budget; neither is runtime evidence.
Rule 4: the Decode column is the full load's decode bound and the plan cell carries the plan's,
        in the words and JSON of `speed_view` (as `fit` and `plan` print them); the text says
        they are memory-bandwidth bounds and which bandwidths they rest on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.llama_cpp import QUANT_RULES_SOURCE
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import VERDICT_WORDS, snapshot_dict, snapshot_text
from gguf_budget.core.views.quant_ladder import QuantLadder, QuantRow
from gguf_budget.core.views.table import aligned_lines
from gguf_budget.core.quant.priced import PRICED_LABEL
from gguf_budget.core.speed.estimate import ESTIMATE_LABEL, SpeedEstimate
from gguf_budget.core.views.speed_view import bound_text, speed_dict

BEST_MARK = "◀ best fit"


def _gpu_layers(row: QuantRow) -> str:
    return f"{row.fit.gpu_layers}/{row.fit.n_layer + 1}"


def _bound_cell(speed: SpeedEstimate | None) -> str:
    return "—" if speed is None else bound_text(speed)


def _plan_cell(row: QuantRow) -> str:
    if row.plan is None:
        return row.plan_error or "—"
    if not row.plan.feasible:
        return "impossible"
    speed = "" if row.plan_speed is None else f", {bound_text(row.plan_speed)}"
    return f"ctx {row.plan.ctx:,}, {row.plan.n_pinned}/{row.plan.n_layer} pinned{speed}"


def _ctx_cell(row: QuantRow) -> str:
    return "none" if row.largest_ctx is None else f"{row.largest_ctx:,}"


@dataclass(frozen=True)
class Column:
    """One column of the ladder: its key (JSON-free), header, cell text and sort value."""

    key: str
    header: str
    cell: Callable[[QuantRow], str]
    sort: Callable[[QuantRow], float]


COLUMNS: tuple[Column, ...] = (
    Column("type", "Type", lambda r: r.name, lambda r: -r.mix.bits_per_weight),
    Column("size", "File size", lambda r: human_bytes(r.mix.file_bytes), lambda r: r.mix.file_bytes),
    Column("bpw", "Bits/weight", lambda r: f"{r.mix.bits_per_weight:.2f}", lambda r: r.mix.bits_per_weight),
    Column("verdict", "Full load", lambda r: VERDICT_WORDS[r.fit.verdict],
           lambda r: (r.fit.verdict == FitVerdict.FITS_GPU) * 2 + r.fits_in_ram),
    Column("gpu_layers", "GPU layers", _gpu_layers, lambda r: r.fit.gpu_layers),
    Column("largest_ctx", "Largest ctx", _ctx_cell, lambda r: r.largest_ctx or 0),
    Column("decode", "Decode", lambda r: _bound_cell(r.speed), lambda r: 0.0 if r.speed is None else r.speed.tok_s),
    Column("plan", "Budget plan", _plan_cell,
           lambda r: -1 if r.plan is None or not r.plan.feasible else r.plan.n_pinned),
)


def mark_text(row: QuantRow, ladder: QuantLadder) -> str:
    """The mark column: the best fit, and the file's own type."""
    marks = [BEST_MARK] if row.name == ladder.best else []
    return "  ".join([*marks, *(["this file's type"] if row.is_source else [])])


def row_tooltip(row: QuantRow, ladder: QuantLadder) -> str:
    """What one row is, in words: priced size, tensor types, full load and plan."""
    types = ", ".join(f"{n} {name}" for name, n in sorted(row.mix.type_counts.items(), key=lambda kv: -kv[1]))
    fallback = f"; {row.mix.n_fallback} tensors fall back to a type their rows divide" if row.mix.n_fallback else ""
    return (f"{row.name}: {row.mix.file_bytes:,} B ({PRICED_LABEL}); tensors {types}{fallback}. "
            f"Full load at ctx {ladder.ctx:,}: {VERDICT_WORDS[row.fit.verdict]}, {_gpu_layers(row)} on GPU; "
            f"largest ctx that fits {_ctx_cell(row)}; decode {_bound_cell(row.speed)} ({ESTIMATE_LABEL}). "
            f"Budget plan: {_plan_cell(row)}.")


def row_dict(row: QuantRow, ladder: QuantLadder) -> dict[str, Any]:
    plan = row.plan
    return {
        "file_type": row.name,
        "file_bytes": row.mix.file_bytes,
        "tensor_bytes": row.mix.tensor_bytes,
        "bits_per_weight": round(row.mix.bits_per_weight, 4),
        "tensor_types": row.mix.type_counts,
        "fallback_tensors": row.mix.n_fallback,
        "verdict": row.fit.verdict.value,
        "gpu_layers": row.fit.gpu_layers,
        "fully_on_gpu": row.fully_on_gpu,
        "fits_in_ram": row.fits_in_ram,
        "largest_ctx": row.largest_ctx,
        "plan": None if plan is None else {"feasible": plan.feasible, "ctx": plan.ctx, "n_pinned": plan.n_pinned,
                                           "n_layer": plan.n_layer, "total": plan.total},
        "plan_error": row.plan_error,
        "best_fit": row.name == ladder.best,
        "source": row.is_source,
        "tok_s_estimate": speed_dict(row.speed),
        "plan_tok_s_estimate": speed_dict(row.plan_speed),
    }


def ladder_dict(ladder: QuantLadder) -> dict[str, Any]:
    """The `quants --json` payload (keys listed in README)."""
    budget = ladder.request.budget
    return {
        "model": ladder.source.name,
        "architecture": ladder.source.architecture,
        "source_file_type": ladder.source.file_type_name,
        "label": PRICED_LABEL,
        "rules": QUANT_RULES_SOURCE,
        "ctx": ladder.ctx,
        "kv_type": ladder.request.kv_type.value,
        "imatrix": ladder.request.imatrix,
        "budget_bytes": None if budget is None else budget.budget_bytes,
        "machine": snapshot_dict(ladder.snapshot),
        "best_fit": ladder.best,
        "best_fit_reason": ladder.best_reason,
        "rows": [row_dict(r, ladder) for r in ladder.rows],
        "skipped": [{"file_type": name, "reason": reason} for name, reason in ladder.skipped],
    }


def best_text(ladder: QuantLadder) -> str:
    if ladder.best is None:
        return f"Best fit: none — no file type runs fully on a GPU or fully in RAM at ctx {ladder.ctx:,}"
    return f"Best fit: {ladder.best} — the highest precision that runs {ladder.best_reason} at ctx {ladder.ctx:,}"


def speed_footnote(ladder: QuantLadder) -> str:
    """Rule 4: what the Decode figures are and the bandwidths they rest on."""
    bw = ladder.request.bandwidths
    tiers = [f"RAM {bw.ram.text}"]
    if ladder.snapshot.gpus:
        tiers.append(f"VRAM {bw.vram.text}")
    if ladder.request.budget is not None:
        tiers.append(f"disk {bw.disk.text}")
    plan = "" if ladder.request.budget is None else " and each budget plan's"
    return f"Decode: each full load's{plan} tokens/s ({ESTIMATE_LABEL}) at {'; '.join(tiers)}."


def ladder_text(ladder: QuantLadder) -> str:
    """A table of every row (Rule 1), the best fit, the skipped types, and what the numbers are."""
    header = [*(c.header for c in COLUMNS), ""]
    rows = [[*(c.cell(r) for c in COLUMNS), mark_text(r, ladder)] for r in ladder.rows]
    lines = [line.rstrip() for line in aligned_lines([header, *rows])]
    budget = ladder.request.budget
    lines += [
        "",
        best_text(ladder),
        *(f"Skipped {name}: {reason}" for name, reason in ladder.skipped),
        f"Every row is {PRICED_LABEL}: its size is the file llama-quantize ({QUANT_RULES_SOURCE}) would write "
        f"from {ladder.source.file_type_name or 'this file'}'s tensor shapes; the full load is an admission "
        f"estimate at ctx {ladder.ctx:,}"
        + ("" if budget is None else f"; the budget plan is at {human_bytes(budget.budget_bytes)}") + ".",
        speed_footnote(ladder),
        "",
        snapshot_text(ladder.snapshot),
    ]
    return "\n".join(lines)
