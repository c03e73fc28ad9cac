"""`gguf-budget evidence LOG`: every recorded log read and compared, and bad input refused in one line (exit 2).

The models are header-only skeletons of the logs' two models (recorded_models.py), written under
the path the logs loaded them by (`models/…`), so the command finds them as llama.cpp did.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from gguf_factory import ArchDesc
from recorded_models import LOGS, model_of, write_recorded_models

from gguf_budget.gui.cli import main

LOG_FILES = sorted(p.name for p in LOGS.glob("*.log"))
MiB = 1024 * 1024


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """A folder with models/<the logs' model names> and logs/ (a link to the recorded logs); the current directory."""
    write_recorded_models(tmp_path / "models")
    (tmp_path / "logs").symlink_to(LOGS, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", LOG_FILES)
def test_evidence_reads_every_recorded_log(workdir, capsys, name):
    assert main(["evidence", f"logs/{name}", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in d["rows"]}
    assert d["model"].endswith(f"{'gemma3-270m-q4_k_m' if model_of(name) == 'gemma3' else 'smollm2-135m-instruct-q4_1'}.gguf")
    assert d["dry_run"] is name.startswith("fitparams")
    assert rows["compute"]["error"] is not None and abs(rows["compute"]["error"]) <= 0.015
    if not d["dry_run"]:
        assert rows["KV"]["error"] == 0.0 and rows["weights"]["error"] == 0.0
        assert abs(rows["peak RSS"]["error"]) <= 0.10
        assert rows["decode"]["unit"] == "tokens/s" and rows["decode"]["estimated"] is None
    assert d["engine"].startswith("llama.cpp 0c1e570")


def test_evidence_text_is_a_table_of_measured_and_estimated(workdir, capsys):
    assert main(["evidence", "logs/gemma3-270m-q4_k_m_ctx2048_f16.log"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Log       gemma3-270m-q4_k_m_ctx2048_f16.log — llama.cpp b1-0c1e570: llama-cli -m")
    assert "ctx 2048, f16 cache, 0 GPU layers, ubatch 512, 1 output row(s), flash attention on, mmap" in out[2]
    table = {line.split()[0]: line for line in out[3:]}
    assert table["repacked"].split()[1:5] == ["12.66", "MiB", "12.66", "MiB"]
    assert table["KV"].split()[1:] == ["21.00", "MiB", "21.00", "MiB", "+0.0%"]
    assert "no decode-speed estimate" in table["decode"] and "45.27 tok/s" in table["decode"]


def test_evidence_finds_the_model_beside_the_log(tmp_path, capsys, monkeypatch):
    write_recorded_models(tmp_path / "runs" / "models")
    shutil.copy(LOGS / "smollm2-135m-instruct-q4_1_ctx512_f16.log", tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    assert main(["evidence", "runs/smollm2-135m-instruct-q4_1_ctx512_f16.log"]) == 0
    assert "runs/models/smollm2-135m-instruct-q4_1.gguf" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["hello world\n", "", "\x00\x01\x02GGUF\n"])
def test_a_text_that_is_not_a_llamacpp_log_is_refused_in_one_line(tmp_path, capsys, text):
    path = tmp_path / "notes.txt"
    path.write_text(text)
    assert main(["evidence", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a llama.cpp log" in err


@pytest.mark.parametrize("args, message", [
    (["logs/smollm2-135m-instruct-q4_1_ctx512_f16.log", "--model", "models/gemma3-270m-q4_k_m.gguf"],
     "the log loaded 272 tensors"),
    (["logs/smollm2-135m-instruct-q4_1_ctx512_f16.log", "--model", "models/none.gguf"], "none.gguf"),
    (["logs/no-such.log"], "cannot read logs/no-such.log"),
    (["logs"], "cannot read logs"),
])
def test_bad_input_is_one_line_and_exit_2(workdir, capsys, args, message):
    assert main(["evidence", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_log_whose_model_is_not_here_asks_for_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(LOGS / "gemma3-270m-q4_k_m_ctx512_f16.log", tmp_path)
    assert main(["evidence", "gemma3-270m-q4_k_m_ctx512_f16.log"]) == 2
    assert "names models/gemma3-270m-q4_k_m.gguf, which is not here: pass --model FILE" in capsys.readouterr().err


def test_fit_json_and_text_itemize_what_llama_cpp_holds(gguf_file, capsys):
    path = gguf_file(ArchDesc(n_layer=4, n_vocab=8192), mode="header_only")
    assert main(["fit", str(path), "--ctx", "2048", "--host-available", "16G", "--no-gpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["runtime_memory"]
    host = d["devices"][0]
    assert host["name"] == "host" and host["file_backed"] == host["mapped_weights"] > 0
    assert d["peak_rss"] == host["anonymous"] + host["mapped_weights"]
    assert host["anonymous"] == host["kv"] + host["output"] + host["compute"] + host["process"] + host["repack"]
    assert host["output"] == 8192 * 4 and d["settings"]["ubatch"] == 512
    assert "verdict compares weights + KV" in d["verdict_basis"]
    assert main(["fit", str(path), "--ctx", "2048", "--host-available", "16G", "--no-gpu"]) == 0
    text = capsys.readouterr().out
    assert "Peak RSS" in text and "anonymous" in text and "mapped weights (file-backed)" in text


def test_a_hostile_log_name_prints_escaped(tmp_path, capsys, monkeypatch):
    """The report quotes the log's file name, which a stranger may have chosen."""
    write_recorded_models(tmp_path / "runs" / "models")
    shutil.copy(LOGS / "smollm2-135m-instruct-q4_1_ctx512_f16.log", tmp_path / "runs" / "run\x1b[2J\u202e.log")
    monkeypatch.chdir(tmp_path)
    assert main(["evidence", "runs/run\x1b[2J\u202e.log"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "run\\x1b[2J\\u202e.log" in out.splitlines()[0]
