"""Importing recorded llama.cpp logs as evidence, finding them again, and the words and bars they give.

Real logs (tests/data/llamacpp-logs) against header-only models of the shape they print.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recorded_models import GEMMA3, LOGS, SMOLLM2
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core import load_model
from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.evidence.compare import EvidenceMismatch
from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.measure.record import Origin
from gguf_budget.core.measure.session import EvidenceError, import_log, stored_evidence
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.evidence.buffer_parts import is_host_buffer
from gguf_budget.core.views.ledger_names import MEASURED_LINES
from gguf_budget.core.views.evidence_view import (
    buffer_total, evidence_claim, evidence_dict, evidence_text, measured_items, measured_parts,
    measured_summary,
)

MIB = 1 << 20
SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"
GEMMA3_LOG = LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log"


@pytest.fixture
def smollm2(tmp_path: Path):
    return load_model(write_gguf(tmp_path / "smollm2.gguf", SMOLLM2, "header_only")[0])


def test_an_imported_log_is_stored_for_the_model_and_found_again(smollm2, tmp_path: Path):
    store = EvidenceStore(tmp_path / "data")
    evidence = import_log(smollm2, SMOLLM2_LOG, store, clock=lambda: 1_700_000_000.0)
    r = evidence.record
    assert (r.origin, r.source, r.recorded_at, r.model_key) == (
        Origin.IMPORTED, str(SMOLLM2_LOG), 1_700_000_000.0, header_fingerprint(smollm2.path))
    assert store.log(r) == SMOLLM2_LOG.read_text()
    (back,) = stored_evidence(smollm2.path, store)
    assert back == evidence


def test_a_stored_log_that_no_longer_parses_is_not_evidence(smollm2, tmp_path: Path):
    store = EvidenceStore(tmp_path / "data")
    evidence = import_log(smollm2, SMOLLM2_LOG, store)
    store.log_path(evidence.record).write_text("overwritten by something else\n")
    assert stored_evidence(smollm2.path, store) == ()


@pytest.mark.parametrize("desc, message", [
    (ArchDesc(arch="llama", n_layer=2), "the log loaded 272 tensors .* has 21: not the same model"),
    # the same tensor count (30 blocks, tied) but other types: the log's 92.10 MiB of tensors differ
    (ArchDesc(arch="llama", n_layer=30, n_embd=576, n_ff=1536, n_head=9, n_head_kv=3, n_vocab=49152, tied=True),
     "the log's model holds 92.10 MiB of tensors .* holds .* MiB: not the same model"),
])
def test_a_log_of_another_model_is_refused(tmp_path: Path, desc: ArchDesc, message: str):
    model = load_model(write_gguf(tmp_path / "m.gguf", desc, "header_only")[0])
    store = EvidenceStore(tmp_path / "data")
    with pytest.raises(EvidenceMismatch, match=message):
        import_log(model, SMOLLM2_LOG, store)
    assert store.records(header_fingerprint(model.path)) == ()


def test_not_a_log_or_no_file_is_one_line(smollm2, tmp_path: Path):
    text = tmp_path / "readme.txt"
    text.write_text("hello\n")
    store = EvidenceStore(tmp_path / "data")
    with pytest.raises(EvidenceError, match=r"^readme.txt: not a llama.cpp log"):
        import_log(smollm2, text, store)
    with pytest.raises(UnreadableFile, match=r"^no such file: .*absent.log"):
        import_log(smollm2, tmp_path / "absent.log", store)


def test_measured_column_is_llama_cpps_figures_topped_by_the_rest_of_peak_rss(smollm2, tmp_path: Path):
    evidence = import_log(smollm2, SMOLLM2_LOG, EvidenceStore(tmp_path / "data"))
    assert tuple(name for name, _ in measured_items(evidence)) == MEASURED_LINES
    items = measured_parts(evidence)
    assert [n for _, n in measured_items(evidence)] == list(items.values())
    # smollm2 at ctx 2048, f16 (the log): 92.10 mapped, KV 45.00, compute 14.01 (…), output 0.19 MiB
    assert items["weights"] == round(92.10 * MIB)
    assert items["repack"] == 0
    assert items["kv"] == round(45.00 * MIB)
    assert items["output"] == round(0.19 * MIB)
    assert buffer_total(evidence) == sum(n for key, n in items.items() if key != "process")
    assert sum(items.values()) == evidence.peak_rss == evidence.log.peak_rss


def test_gemma3_repack_is_its_own_segment(tmp_path: Path):
    gemma = load_model(write_gguf(tmp_path / "g.gguf", GEMMA3, "header_only")[0])
    items = measured_parts(import_log(gemma, GEMMA3_LOG, EvidenceStore(tmp_path / "data")))
    assert items["repack"] == round(12.66 * MIB) and items["weights"] == round(235.16 * MIB)


def test_claim_summary_text_and_json_say_what_when_and_from_where(smollm2, tmp_path: Path):
    evidence = import_log(smollm2, SMOLLM2_LOG, EvidenceStore(tmp_path / "data"), clock=lambda: 1_700_000_000.0)
    claim = evidence_claim(evidence)
    assert claim.startswith("llama.cpp b1-0c1e570 measured peak RSS ")
    assert "(ctx 2,048, KV f16)" in claim and "imported from smollm2-135m-instruct-q4_1_ctx2048_f16.log on " in claim
    assert claim.endswith(f"log {evidence.record.log_name}") and "estimate" not in claim
    assert measured_summary(evidence) in claim
    d = json.loads(json.dumps(evidence_dict(evidence, "/kept.log")))
    assert d["origin"] == "imported" and d["build"] == "b1-0c1e570" and d["peak_rss_source"] == "/usr/bin/time -v"
    assert d["components"] == measured_parts(evidence) and d["log"] == "/kept.log"
    assert list(d["components"]) == ["weights", "repack", "kv", "compute", "output", "process"]
    assert {(b["kind"], b["device"], b["mib"]) for b in d["buffers"]} >= {("model", "CPU_Mapped", "92.10")}
    text = evidence_text(evidence, "/kept.log")
    assert text.splitlines()[0] == f"Runtime evidence: {claim}" and text.endswith("Log kept at /kept.log")


@pytest.mark.parametrize("device, host", [
    ("CPU", True), ("CPU_Mapped", True), ("CPU_REPACK", True), ("CUDA_Host", True), ("ROCm_Host", True),
    ("CUDA0", False), ("ROCm1", False), ("Vulkan0", False), ("Metal", False),
])
def test_only_host_buffers_count_inside_the_peak_rss(device, host):
    assert is_host_buffer(device) is host


def test_an_older_arm_repack_buffer_is_a_repack_segment_too(tmp_path: Path):
    """llama.cpp named the repacked copy CPU_AARCH64 before CPU_REPACK; both are the same segment."""
    gemma = load_model(write_gguf(tmp_path / "g.gguf", GEMMA3, "header_only")[0])
    older = GEMMA3_LOG.read_text().replace("CPU_REPACK model buffer size", "CPU_AARCH64 model buffer size")
    source = tmp_path / "gemma3-older.log"
    source.write_text(older)
    items = measured_parts(import_log(gemma, source, EvidenceStore(tmp_path / "data")))
    assert items["repack"] == round(12.66 * MIB) and items["weights"] == round(235.16 * MIB)


def test_opening_a_model_parses_its_newest_log_only(smollm2, tmp_path: Path, monkeypatch):
    """The window asks for the newest evidence at every open; it parsed every stored log (201: 3.9 s of CPU)."""
    import gguf_budget.core.measure.session as session
    from gguf_budget.gui.qt.evidence.evidence_link import EvidenceLink

    store = EvidenceStore(tmp_path / "data")
    for n in range(6):
        newest = import_log(smollm2, SMOLLM2_LOG, store, clock=lambda n=n: 1_700_000_000.0 + n)
    parsed: list[int] = []
    real = session.parse_llamacpp_log
    monkeypatch.setattr(session, "parse_llamacpp_log", lambda text: parsed.append(1) or real(text))
    link = EvidenceLink.__new__(EvidenceLink)
    link.store = store
    assert link._newest(smollm2) == (smollm2, newest)
    assert len(parsed) == 1
