"""`gguf-budget evidence`: a llama.cpp run's own report beside our estimate, as text and JSON.

Rule 1: one row per component: measured, estimated, error = (estimated − measured) / measured.
Rule 2: a dry run (llama-fit-params, the `--fit` pass) allocated nothing: said so, its rows kept.
Rule 3: decode and prefill compare a measurement with a calibrated estimate at the run's own
        position (`compare` Rule 5): the measured tokens/s, the estimate as "≈ N tok/s", the
        error as for every row, and the share ("measured 118% of the estimate"); JSON adds
        `share` (measured / estimated, speed rows only). The estimate's bytes, figures and
        calibration follow the table, as `fit` prints them. Where either side is missing, the
        row says which.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.evidence.compare import Comparison, ComparisonRow
from gguf_budget.core.fit.runtime_memory import flash_attn
from gguf_budget.core.llama_cpp import LLAMA_CPP_SOURCE
from gguf_budget.core.units import human_bytes
from gguf_budget.core.evidence.compare import TOKENS_PER_S
from gguf_budget.core.views.speed_view import approx_tok_s, speed_dict, speed_text
from gguf_budget.core.views.table import aligned_lines

NO_SPEED_ESTIMATE = "no estimate: the full load at these settings cannot be priced (a fact is missing)"
NO_SPEED_MEASURED = {"decode": "not measured: the log has no `eval time` line",
                     "prefill": "not measured: the log has no `prompt eval time` line"}
SPEED_TITLE = "Speed estimate (full load at the log's settings and position)"


def _amount(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.2f} tok/s" if unit == TOKENS_PER_S else human_bytes(round(value))


def _estimated(row: ComparisonRow) -> str:
    if row.unit == TOKENS_PER_S and row.estimated is not None:
        return approx_tok_s(row.estimated)
    return _amount(row.estimated, row.unit)


def _error(row: ComparisonRow) -> str:
    """Rules 1 and 3."""
    if row.unit == TOKENS_PER_S:
        if row.estimated is None:
            return NO_SPEED_ESTIMATE
        share = row.share
        if share is None:
            return NO_SPEED_MEASURED.get(row.name, "not measured")
        return f"{100 * (row.error or 0):+.1f}% (measured {100 * share:.0f}% of the estimate)"
    return "—" if row.error is None else f"{100 * row.error:+.1f}%"


def speed_beside(c: Comparison) -> str:
    """The speed rows in one line for the window's measured row: each timing beside its estimate and the share."""
    parts = []
    for row in (c.row("decode"), c.row("prefill")):
        if row.estimated is None:
            continue
        share = "" if row.share is None else f", measured {100 * row.share:.0f}% of it"
        parts.append(f"{row.name} {_estimated(row)}{share}")
    return "" if not parts else "estimated at its settings: " + "; ".join(parts)


def _settings(c: Comparison) -> dict[str, Any]:
    r, s = c.request, c.request.engine
    return {"ctx": r.ctx, "kv_type": r.kv_type, "gpu_layers": r.gpu_layers, "ubatch": s.ubatch, "outputs": s.outputs,
            "flash_attn": flash_attn(s), "swa_full": s.swa_full, "mmap": s.mmap,
            "cpu_features": sorted(s.cpu_features) if s.cpu_features is not None else None,
            "runtime": s.runtime.value, "prompt_tokens": s.short.prompt, "generated_tokens": s.short.generated}


def evidence_dict(c: Comparison, log_name: str, model_path: str, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON payload; `notes` say why a bandwidth was not measured (as `fit --json`'s `bandwidth_notes`)."""
    log = c.log
    return {
        "log": log_name,
        "build": log.build.render() if log.build else None,
        "command": log.command,
        "model": model_path,
        "logged_model": c.run.model.path,
        "dry_run": c.run.dry_run,
        "settings": _settings(c),
        "rows": [{"name": r.name, "measured": r.measured, "estimated": r.estimated, "unit": r.unit, "error": r.error,
                  "share": r.share}
                 for r in c.rows],
        "peak_rss_source": log.peak_rss_source,
        "engine": LLAMA_CPP_SOURCE,
        "tok_s_estimate": speed_dict(c.speed),
        "bandwidth_notes": list(notes),
    }


def evidence_text(c: Comparison, log_name: str, model_path: str, notes: tuple[str, ...] = ()) -> str:
    log, run, s = c.log, c.run, c.request.engine
    build = log.build.render() if log.build else "build not printed"
    lines = [
        f"Log       {log_name} — llama.cpp {build}" + (f": {log.command}" if log.command else ""),
        f"Model     {model_path} (the log loaded {run.model.path}: {run.model.n_tensors} tensors)",
        f"Settings  ctx {c.request.ctx}, {c.request.kv_type} cache, {c.request.gpu_layers} GPU layers, ubatch {s.ubatch}, "
        f"{s.outputs} output row(s), flash attention {'on' if flash_attn(s) else 'off'}, "
        f"{'mmap' if s.mmap else 'no mmap (-lm none)'}{', full-size SWA cache' if s.swa_full else ''}",
        f"Run       {s.runtime}, {s.short.prompt:,} prompt tokens + {s.short.generated:,} generated: the peak RSS "
        "estimate is for that run (what its graphs touch, its checkpoints, its program)",
    ]
    if run.dry_run:
        lines.append("Dry run   llama.cpp allocated nothing (buffers print 0.00 MiB); only its compute projection compares")
    table = [("", "measured", "estimated", "error")]
    table += [(r.name, _amount(r.measured, r.unit), _estimated(r), _error(r)) for r in c.rows]
    lines += aligned_lines(table)
    if log.peak_rss_source:
        lines.append(f"Peak RSS measured by {log.peak_rss_source}; estimates follow {LLAMA_CPP_SOURCE}")
    lines += ["", speed_text(SPEED_TITLE, c.speed, NO_SPEED_ESTIMATE)]
    return "\n".join([*lines, *notes])
