"""`measure` with a real llama.cpp on a tiny model the test writes: the stored evidence is what the log printed.

Every test here runs llama.cpp for real (see llama_support: CI fails without one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from gguf_factory import ArchDesc, write_gguf
from llama_support import llama_cpp_python_engine, llama_engine, printed_buffers
from runnable_model import write_runnable_model

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.measure.engine import EngineKind
from gguf_budget.core.measure.progress import Progress
from gguf_budget.core.measure.record import Origin
from gguf_budget.core.measure.runner import MeasureError, run_measurement
from gguf_budget.core.measure.session import measure_model, stored_evidence
from gguf_budget.core.measure.store import EvidenceStore


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_runnable_model(tmp_path / "tiny.gguf")


def buffers_of(evidence) -> list[tuple[str, str, str]]:
    return sorted((b.kind.value, b.device, b.mib) for b in evidence.log.run.buffers)


def test_cli_measures_a_real_run_and_stores_what_llama_cpp_printed(tiny: Path, private_data_dir: Path):
    engine = llama_engine()
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(tiny), "--ctx", "512",
                           "--kv-type", "q8_0", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    log_text = Path(report["log"]).read_text()
    assert Path(report["log"]).is_relative_to(private_data_dir)
    # the buffers kept are exactly the buffer lines the allocating load printed
    printed = printed_buffers(log_text)
    assert printed and sorted((b["kind"], b["device"], b["mib"]) for b in report["buffers"]) == printed
    assert report["settings"]["n_ctx"] == 512 and report["settings"]["type_k"] == "q8_0"
    assert report["engine"] == engine.label and report["origin"] == "measured"
    assert report["model_key"] == header_fingerprint(tiny)
    assert report["peak_rss"] > report["buffer_total"] > 0
    # … and they come back from the store for the same header
    (back,) = stored_evidence(str(tiny), EvidenceStore())
    assert buffers_of(back) == printed and back.peak_rss == report["peak_rss"]


def test_cli_text_names_the_claim_and_where_the_log_is(tiny: Path):
    llama_engine()
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(tiny), "--ctx", "256"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines: list[str] = []
    for line in done.stdout.splitlines():  # a line wrapped at 100 columns continues four spaces in
        if line.startswith("    ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    first, *rows, last = lines
    assert first.startswith("Runtime evidence: llama.cpp") and "measured here" in first and "ctx 256" in first
    assert [row.split()[0] for row in rows] == ["weights", "repack", "kv", "compute", "output", "process"]
    assert last.startswith("Log kept at ")


@pytest.mark.parametrize("kind", [EngineKind.COMPLETION, EngineKind.CLI, EngineKind.SERVER])
def test_every_kind_of_llama_cpp_binary_measures(tiny: Path, kind: EngineKind):
    engine = llama_engine(kind)
    reports: list[Progress] = []
    evidence = measure_model(str(tiny), MeasureSettings(256, 0), engine, EvidenceStore(), timeout_s=120,
                             progress=reports.append)
    raw = EvidenceStore().log(evidence.record)
    assert raw.startswith(f"+ {engine.executable} -m {tiny}")
    assert buffers_of(evidence) == printed_buffers(raw)
    assert evidence.log.run.settings.n_ctx == 256 and evidence.record.origin is Origin.MEASURED
    # The kernel-counted peak (from /usr/bin/time) is always there and is the one shown. A run
    # of 0.1 s can end before psutil's first poll finds the engine under /usr/bin/time, so the
    # polled one may be missing or low; it is never above the kernel's by more than 1 MiB (the
    # kernel batches its per-CPU RSS counters, so a poll may read a few pages ahead).
    assert evidence.log.peak_rss is not None and evidence.peak_rss == evidence.log.peak_rss
    polled = evidence.record.peak_rss_polled
    assert polled is None or polled <= evidence.log.peak_rss + (1 << 20)
    assert reports and reports[-1].stage != "starting llama.cpp"


def test_llama_cpp_python_measures_like_the_binaries(tiny: Path):
    """The last-resort engine (Rule 1 of engine.py) runs its script for real: its verbose log is
    read like llama-cli's, and the stored buffers are the ones llama.cpp printed."""
    engine = llama_cpp_python_engine()
    evidence = measure_model(str(tiny), MeasureSettings(256, 0), engine, EvidenceStore(), timeout_s=120)
    raw = EvidenceStore().log(evidence.record)
    assert raw.startswith(f"+ {engine.executable} -c ")
    assert buffers_of(evidence) and buffers_of(evidence) == printed_buffers(raw)
    assert evidence.log.run.settings.n_ctx == 256 and evidence.record.origin is Origin.MEASURED
    assert evidence.peak_rss is not None and evidence.peak_rss > 0


def test_without_usr_bin_time_the_polled_peak_is_written_into_the_log(tiny: Path):
    engine = llama_engine()
    evidence = measure_model(str(tiny), MeasureSettings(256, 0), engine, EvidenceStore(), time_binary=None)
    raw = EvidenceStore().log(evidence.record)
    assert "Maximum resident set size" not in raw
    assert raw.rstrip().endswith(f"peak RSS: {evidence.record.peak_rss_polled} bytes (psutil, polled every 50 ms)")
    assert evidence.peak_rss == evidence.log.peak_rss == evidence.record.peak_rss_polled


def _children_now() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.parametrize("stop, message", [("cancel", "the measurement was cancelled"),
                                           ("timeout", "the measurement timed out after 0 s")])
def test_cancel_and_timeout_stop_the_engine_and_leave_no_process(tiny: Path, stop: str, message: str):
    engine = llama_engine(EngineKind.SERVER)  # a server never exits by itself
    before = _children_now()
    cancel = threading.Event()
    if stop == "cancel":
        cancel.set()
    with pytest.raises(MeasureError) as e:
        run_measurement(engine, str(tiny), MeasureSettings(256, 0), cancel=cancel,
                        timeout_s=0 if stop == "timeout" else 120)
    assert str(e.value) == message
    assert _children_now() <= before


def test_a_model_llama_cpp_refuses_is_a_one_line_error(tmp_path: Path):
    engine = llama_engine()
    no_tokenizer = write_gguf(tmp_path / "no-vocab.gguf", ArchDesc())[0]
    with pytest.raises(MeasureError, match=r"^llama.cpp exited with code \d+: ") as e:
        measure_model(str(no_tokenizer), MeasureSettings(256, 0), engine, EvidenceStore())
    assert "\n" not in str(e.value)
    assert EvidenceStore().records(header_fingerprint(no_tokenizer)) == ()


def test_cli_without_weights_or_without_llama_cpp_says_why(tmp_path: Path):
    skeleton = write_gguf(tmp_path / "skeleton.gguf", ArchDesc(), "header_only")[0]
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(skeleton)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "has no weights (header only)" in done.stderr
    full = write_runnable_model(tmp_path / "tiny.gguf")
    env = {k: v for k, v in os.environ.items() if k != "GGUF_BUDGET_LLAMA_BIN"}
    env["PATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(full)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and done.stderr.startswith("gguf-budget measure: no llama.cpp found")
    assert len(done.stderr.strip().splitlines()) == 1


def test_measure_runs_the_llama_cpp_options_asked_and_says_so(tiny: Path, private_data_dir: Path):
    """llama.cpp's own options after `--` reach the run (issue 32): the log's settings are the ones asked."""
    llama_engine()
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(tiny), "--ctx", "512", "--json",
                           "--", "-ub", "128", "-b", "256", "-fa", "off", "-ctv", "q8_0", "--temp", "0.1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "-ctv q8_0" not in done.stdout  # llama.cpp refuses a quantized V without -fa
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(tiny), "--ctx", "512", "--json",
                           "--", "-ub", "128", "-b", "256", "-fa", "off", "-ctk", "q8_0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["settings"]["type_k"], report["settings"]["type_v"]) == ("q8_0", "f16")
    assert report["settings"]["flash_attn"] == "disabled"
    run = parse_llamacpp_log(Path(report["log"]).read_text()).run
    assert (run.settings.n_ubatch, run.settings.n_batch) == (128, 256)
