"""What runtime evidence says on screen and in the CLI: the Measured column, the claim, the summary.

Pure views over `RuntimeEvidence` (a stored llama.cpp log and its record), so the window and
`measure` show the same words and numbers.

Rule 1: the Measured column stacks what llama.cpp itself reported for the run that allocated
        memory (not a `--fit` dry run): mapped/loaded weights, the CPU_REPACK copy, KV (and
        recurrent state), compute and output buffers, then the rest of the peak RSS (binary,
        libraries, tokenizer) when a peak was recorded, as `evidence.buffer_parts` adds them up.
Rule 2: the runtime-evidence claim says what was measured, by which llama.cpp, with which
        settings, when, and from which log — measured here or imported — so it can never be
        mistaken for the admission estimate beside it.
Rule 3: the Measured column's label names the run's ctx ("Measured (ctx 2,048)"), since it
        stands beside a plan at the window's ctx, which may differ.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf_budget.core.evidence.buffer_parts import buffer_parts, buffers_total, process_rest
from gguf_budget.core.evidence.log_records import LlamaCppLog
from gguf_budget.core.measure.record import Origin
from gguf_budget.core.measure.session import RuntimeEvidence
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.ledger_names import MEASURED_PARTS

MEASURED_COLUMN = "Measured"


def buffer_total(evidence: RuntimeEvidence) -> int | None:
    """Every buffer llama.cpp reported for the allocating run (all devices)."""
    run = evidence.log.run
    return None if run is None else buffers_total(run)


def measured_parts(evidence: RuntimeEvidence) -> dict[str, int]:
    """Rule 1, by JSON key: llama.cpp's buffers (all devices), then the peak RSS beyond its host buffers."""
    run = evidence.log.run
    if run is None:
        return {}
    parts = {**buffer_parts(run), "process": process_rest(run, evidence.peak_rss)}
    return {key: parts[key] for key, _ in MEASURED_PARTS}


def measured_items(evidence: RuntimeEvidence) -> tuple[tuple[str, int], ...]:
    """Rule 1: the Measured column, (segment name, bytes) in MEASURED_LINES order."""
    parts = measured_parts(evidence)
    return tuple((name, parts[key]) for key, name in MEASURED_PARTS if key in parts)


def measured_column(evidence: RuntimeEvidence) -> str:
    """Rule 3: the Measured column's label, with the ctx the run had."""
    run = evidence.log.run
    n_ctx = None if run is None else run.settings.n_ctx
    ctx = "unknown" if n_ctx is None else f"{n_ctx:,}"
    return f"{MEASURED_COLUMN} (ctx {ctx})"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def settings_text(evidence: RuntimeEvidence) -> str:
    """ctx, KV types and GPU layers as llama.cpp reported them for the run."""
    run = evidence.log.run
    if run is None:
        return "no model load"
    s = run.settings
    ctx = "ctx unknown" if s.n_ctx is None else f"ctx {s.n_ctx:,}"
    kv = s.type_k if s.type_k == s.type_v else f"{s.type_k}/{s.type_v}"
    gpu = "" if run.offloaded is None else f", {run.offloaded[0]} of {run.offloaded[1]} layers on GPU"
    return f"{ctx}, KV {kv or 'unknown'}{gpu}"


def engine_text(evidence: RuntimeEvidence) -> str:
    build = evidence.log.build
    return "llama.cpp" if build is None else f"llama.cpp {build.render()}"


def figures_text(evidence: RuntimeEvidence) -> str:
    peak = evidence.peak_rss
    parts = [f"buffers {human_bytes(buffer_total(evidence))}"]
    if peak is not None:
        parts.insert(0, f"peak RSS {human_bytes(peak)}")
    if evidence.log.eval is not None:
        parts.append(f"decode {evidence.log.eval.tokens_per_second:.1f} tok/s")
    return ", ".join(parts)


def evidence_claim(evidence: RuntimeEvidence) -> str:
    """Rule 2: the runtime-evidence claim, one sentence."""
    r = evidence.record
    how = "measured here" if r.origin is Origin.MEASURED else f"imported from {Path(r.source).name}"
    return (f"{engine_text(evidence)} measured {figures_text(evidence)} ({settings_text(evidence)}); "
            f"{how} on {_when(r.recorded_at)}, log {r.log_name}")


def measured_summary(evidence: RuntimeEvidence) -> str:
    """The side panel's row beside the full-load estimate."""
    return f"{figures_text(evidence)} ({settings_text(evidence)})"


def evidence_dict(evidence: RuntimeEvidence, log_path: str) -> dict[str, Any]:
    """`measure --json`: the record, llama.cpp's own figures per component, and where the log is kept."""
    r = evidence.record
    run = evidence.log.run
    return {
        "model": r.model_path,
        "model_key": r.model_key,
        "origin": r.origin.value,
        "recorded_at": r.recorded_at,
        "engine": r.source if r.origin is Origin.MEASURED else None,
        "command": list(r.command),
        "build": None if evidence.log.build is None else evidence.log.build.render(),
        "settings": None if run is None else {
            "n_ctx": run.settings.n_ctx, "type_k": run.settings.type_k, "type_v": run.settings.type_v,
            "flash_attn": run.settings.flash_attn, "offloaded": list(run.offloaded) if run.offloaded else None,
        },
        "buffers": [] if run is None else [
            {"kind": b.kind.value, "device": b.device, "mib": b.mib, "bytes": b.nbytes} for b in run.buffers],
        "components": measured_parts(evidence),
        "buffer_total": buffer_total(evidence),
        "peak_rss": evidence.peak_rss,
        "peak_rss_source": evidence.log.peak_rss_source or ("psutil" if r.peak_rss_polled is not None else None),
        "peak_rss_polled": r.peak_rss_polled,
        "eval_tokens_per_second": None if evidence.log.eval is None else evidence.log.eval.tokens_per_second,
        "seconds": r.seconds,
        "log": log_path,
    }


def evidence_text(evidence: RuntimeEvidence, log_path: str) -> str:
    """`measure` as text: the claim, then one line per component."""
    lines = [f"Runtime evidence: {evidence_claim(evidence)}"]
    lines += [f"  {key:<8} {human_bytes(n):>12}" for key, n in measured_parts(evidence).items()]
    lines.append(f"Log kept at {log_path}")
    return "\n".join(lines)


@dataclass(frozen=True)
class MeasuredView:
    """Everything the window draws of one piece of evidence: the Measured column, the row beside
    the full-load estimate, and the runtime-evidence claim."""

    column: tuple[str, tuple[tuple[str, int], ...]]
    summary: str
    claim: str
    log: LlamaCppLog | None = None
    """The log itself, so the window can set its timings beside the estimates (`evidence_report.speed_beside`)."""


def measured_view(evidence: RuntimeEvidence) -> MeasuredView:
    return MeasuredView((measured_column(evidence), measured_items(evidence)), measured_summary(evidence),
                        evidence_claim(evidence), evidence.log)
