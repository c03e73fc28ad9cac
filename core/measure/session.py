"""Measure or import runtime evidence for a model, keep it, and find it again: what CLI and window share.

Rule 1: evidence is a llama.cpp log read by `parse_llamacpp_log`; a text that is not one is
        refused with its one-line reason, before anything is stored. A log file is read like
        every small file (`core.regular_file`: a regular file, at most `FileKind.LOG.cap`).
Rule 2: a measured log carries its own peak RSS: /usr/bin/time's block when the run had it,
        else a `peak RSS: N bytes (psutil)` line is appended, so a stored log needs nothing else.
Rule 3: an imported log must describe the model it is stored for: `evidence.compare.check_model`
        (the same tensor count and tensor bytes as the model's header; llama.cpp prints both).
Rule 4: evidence is found again by the model's header fingerprint, newest first; a stored log
        that no longer parses is skipped, never shown as evidence.
Rule 5: a stored log's decode and prefill timings are kept beside the evidence, in the same data
        folder, as a calibration run (`speed.calibration`) tagged with where it ran: a run
        measured here is this machine's, with the load average before it started (what else
        ran, before llama.cpp's own threads count in it) and the cores; an
        imported log's machine is unknown (it calibrates nothing until adopted); its tier (CPU,
        one GPU, hybrid) is read from its buffers.
Rule 6: a finished run's log is never lost: when the store cannot be written (a file in its
        place, a read-only folder, a full disk) or the log does not read as llama.cpp's, it is
        kept in a file of its own (the temporary folder, else the current one, else home) and
        the one-line error says where; a copy a folder cannot hold whole is removed, not left cut.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from gguf_budget.core.errors import BudgetError, EvidenceError, LlamaCppLogError, UnreadableFile
from gguf_budget.core.evidence.compare import check_model
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.evidence.log_records import EvalSpeed, LlamaCppLog
from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.measure.engine import Engine
from gguf_budget.core.measure.record import EvidenceRecord, Origin
from gguf_budget.core.measure.runner import (
    DEFAULT_TIMEOUT_S, TIME_BINARY, ProgressCallback, RunOutput, run_measurement,
)
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.regular_file import FileKind, read_text
from gguf_budget.core.safe_write import create_exclusive
from gguf_budget.core.machine.load import load_average, usable_cpus
from gguf_budget.core.machine.bandwidth_store import host_key
from gguf_budget.core.evidence.run_tier import run_tier
from gguf_budget.core.speed.calibration import Timed, measured_run, remember_run


@dataclass(frozen=True)
class RuntimeEvidence:
    """A stored record and what its log says."""

    record: EvidenceRecord
    log: LlamaCppLog

    @property
    def peak_rss(self) -> int | None:
        return self.log.peak_rss if self.log.peak_rss is not None else self.record.peak_rss_polled


def _parse(text: str, origin: str) -> LlamaCppLog:
    try:
        return parse_llamacpp_log(text)
    except LlamaCppLogError as e:
        raise EvidenceError(f"{origin}: {e}") from None


def _with_peak(run: RunOutput, parsed: LlamaCppLog) -> str:
    """Rule 2."""
    if parsed.peak_rss is not None or run.peak_rss_polled is None:
        return run.log
    newline = "" if run.log.endswith("\n") else "\n"
    return f"{run.log}{newline}peak RSS: {run.peak_rss_polled} bytes (psutil, polled every 50 ms)\n"


def _timed(speed: EvalSpeed | None) -> Timed | None:
    return None if speed is None else (speed.tokens_per_second, speed.tokens)


def remember_speed(model: ModelSpec, log: LlamaCppLog, store: EvidenceStore, at: float, *, here: bool,
                   load: float | None = None) -> bool:
    """Rule 5 (`here`: measured on this machine now, beside `load`); True when the run was kept as a calibration
    point."""
    run = log.run
    if run is None or run.dry_run:
        return False
    tier, device = run_tier(run)
    where = {"machine": host_key(), "load": load, "cores": usable_cpus()} if here else {}
    timed = measured_run(model, run.settings.type_k, _timed(log.eval), _timed(log.prompt_eval), at, tier=tier,
                         device=device, **where)
    return timed is not None and remember_run(timed, store.root.parent)


def measure_model(
    model_path: str,
    settings: MeasureSettings,
    engine: Engine,
    store: EvidenceStore,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    clock: Callable[[], float] = time.time,
    time_binary: str | None = TIME_BINARY,
) -> RuntimeEvidence:
    """Run the model once with `engine` and store the log as evidence (MeasureError / EvidenceError)."""
    key = header_fingerprint(model_path)
    load = load_average()  # Rule 5: what else ran, before llama.cpp's own threads count in the average
    run = run_measurement(engine, model_path, settings, timeout_s=timeout_s, cancel=cancel, progress=progress,
                          time_binary=time_binary)
    try:
        parsed = parse_llamacpp_log(run.log)
    except LlamaCppLogError as e:
        raise EvidenceError(f"llama.cpp ran, but its log: {e}; {kept_aside(run.log)}") from None
    log = _with_peak(run, parsed)
    record = EvidenceRecord(model_key=key, model_path=str(model_path), origin=Origin.MEASURED, recorded_at=clock(),
                            log_name="pending", source=engine.label, command=run.command, settings=settings,
                            peak_rss_polled=run.peak_rss_polled, seconds=run.seconds)
    try:
        saved = store.save(record, log)
    except OSError as e:
        raise EvidenceError(f"the evidence store {store.root} cannot be written ({e.strerror or e}); "
                            f"{kept_aside(log)}") from None
    evidence = RuntimeEvidence(saved, _parse(log, "the stored log"))
    try:
        remember_speed(load_model(str(model_path)), evidence.log, store, record.recorded_at, here=True,
                       load=load)
    except BudgetError:  # the file changed under the run: the evidence stands, it calibrates nothing
        pass
    return evidence


def kept_aside(log: str) -> str:
    """Rule 6: the run's log in a file of its own where the store could not take it; says where (or why not)."""
    reasons = []
    stem = f"gguf-budget-measure-{time.strftime('%Y%m%d-%H%M%S')}"
    for folder in (tempfile.gettempdir(), os.getcwd(), str(Path.home())):
        try:  # a copy the disk cannot hold whole is removed (a full disk left three cut copies)
            path = create_exclusive(Path(folder), stem, ".log", log.encode("utf-8", errors="surrogateescape"))
        except OSError as e:
            reasons.append(f"{folder}: {e.strerror or e}")
            continue
        return f"the log of this run is kept at {path}"
    return f"the log could not be kept either ({'; '.join(reasons)})"


def import_log(model: ModelSpec, log_path: str | Path, store: EvidenceStore,
               clock: Callable[[], float] = time.time) -> RuntimeEvidence:
    """Read a llama.cpp log from a file, check it is of `model`, and store it as evidence."""
    path = Path(log_path)
    text = read_text(path, FileKind.LOG)
    parsed = _parse(text, path.name)
    if parsed.run is None:
        raise EvidenceError(f"{path.name}: the log loads no model, so it cannot be evidence for one")
    check_model(parsed.run, model)
    record = EvidenceRecord(model_key=header_fingerprint(model.path), model_path=model.path, origin=Origin.IMPORTED,
                            recorded_at=clock(), log_name="pending", source=str(path), peak_rss_polled=None)
    evidence = RuntimeEvidence(store.save(record, text), parsed)
    remember_speed(model, parsed, store, record.recorded_at, here=False)
    return evidence


def _each_evidence(model_path: str, store: EvidenceStore) -> Iterator[RuntimeEvidence]:
    """Rule 4: the model's evidence, newest first, each log parsed only when it is asked for."""
    for record in store.records(header_fingerprint(model_path)):
        try:
            yield RuntimeEvidence(record, parse_llamacpp_log(store.log(record)))
        except (OSError, UnreadableFile, LlamaCppLogError):
            continue


def stored_evidence(model_path: str, store: EvidenceStore) -> tuple[RuntimeEvidence, ...]:
    """Rule 4: all the model's evidence, newest first."""
    return tuple(_each_evidence(model_path, store))


def newest_evidence(model_path: str, store: EvidenceStore) -> RuntimeEvidence | None:
    """Rule 4: the model's newest evidence that still parses — what opening a model shows. It parses logs
    until one reads (every open parsed every stored log: 201 logs, 3.9 s of CPU)."""
    return next(_each_evidence(model_path, store), None)
