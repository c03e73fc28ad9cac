"""`gguf-budget evidence`: a llama.cpp run's own report beside our estimate, as text and JSON.

Rule 1: one row per component: measured, estimated, error = (estimated − measured) / measured.
Rule 2: a dry run (llama-fit-params, the `--fit` pass) allocated nothing: said so, its rows kept.
Rule 3: where we have no estimate (decode speed), the row says so instead of an error.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.evidence.compare import Comparison, ComparisonRow
from gguf_budget.core.llama_cpp import LLAMA_CPP_SOURCE
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.table import aligned_lines

NO_SPEED_ESTIMATE = "no decode-speed estimate to compare with yet"


def _amount(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.2f} tok/s" if unit == "tokens/s" else human_bytes(round(value))


def _error(row: ComparisonRow) -> str:
    if row.unit == "tokens/s" and row.estimated is None:
        return NO_SPEED_ESTIMATE
    return "—" if row.error is None else f"{100 * row.error:+.1f}%"


def _settings(c: Comparison) -> dict[str, Any]:
    r, s = c.request, c.request.engine
    return {"ctx": r.ctx, "kv_type": r.kv_type, "gpu_layers": r.gpu_layers, "ubatch": s.ubatch, "outputs": s.outputs,
            "flash_attn": s.flash_attn, "swa_full": s.swa_full, "mmap": s.mmap,
            "cpu_features": sorted(s.cpu_features) if s.cpu_features is not None else None}


def evidence_dict(c: Comparison, log_name: str, model_path: str) -> dict[str, Any]:
    log = c.log
    return {
        "log": log_name,
        "build": log.build.render() if log.build else None,
        "command": log.command,
        "model": model_path,
        "logged_model": c.run.model.path,
        "dry_run": c.run.dry_run,
        "settings": _settings(c),
        "rows": [{"name": r.name, "measured": r.measured, "estimated": r.estimated, "unit": r.unit, "error": r.error}
                 for r in c.rows],
        "peak_rss_source": log.peak_rss_source,
        "engine": LLAMA_CPP_SOURCE,
    }


def evidence_text(c: Comparison, log_name: str, model_path: str) -> str:
    log, run, s = c.log, c.run, c.request.engine
    build = log.build.render() if log.build else "build not printed"
    lines = [
        f"Log       {log_name} — llama.cpp {build}" + (f": {log.command}" if log.command else ""),
        f"Model     {model_path} (the log loaded {run.model.path}: {run.model.n_tensors} tensors)",
        f"Settings  ctx {c.request.ctx}, {c.request.kv_type} cache, {c.request.gpu_layers} GPU layers, ubatch {s.ubatch}, "
        f"{s.outputs} output row(s), flash attention {'on' if s.flash_attn else 'off'}, "
        f"{'mmap' if s.mmap else 'no mmap'}{', full-size SWA cache' if s.swa_full else ''}",
    ]
    if run.dry_run:
        lines.append("Dry run   llama.cpp allocated nothing (buffers print 0.00 MiB); only its compute projection compares")
    table = [("", "measured", "estimated", "error")]
    table += [(r.name, _amount(r.measured, r.unit), _amount(r.estimated, r.unit), _error(r)) for r in c.rows]
    lines += aligned_lines(table)
    if log.peak_rss_source:
        lines.append(f"Peak RSS measured by {log.peak_rss_source}; estimates follow {LLAMA_CPP_SOURCE}")
    return "\n".join(lines)
