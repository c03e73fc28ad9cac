"""`gguf-budget evidence LOG`: every recorded log read and compared, and bad input refused in one line (exit 2).

The models are header-only skeletons of the logs' two models (recorded_models.py), written under
the path the logs loaded them by (`models/…`), so the command finds them as llama.cpp did.
The speed estimates are asked at a typed RAM bandwidth (`--ram-bw 20G`) and the default calibration, so they
are the same on every machine, and they come from `fit`'s call for the same ctx, KV type and GPU layers.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from gguf_factory import ArchDesc
from recorded_models import LOGS, model_of, write_recorded_models

from gguf_budget.core import load_model
from gguf_budget.core.model.kv import kv_price
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

LOG_FILES = sorted(p.name for p in LOGS.glob("*.log"))
MiB = 1024 * 1024
TYPED_RAM = ["--ram-bw", "20G"]
# A partial offload, as llama.cpp b6700 prints it: 20 of 31 layers (the output layer and 19 blocks) on CUDA0.
SMOLLM2_ON_A_GPU = """main: build = 6700 (1d8a1b2c)
llama_model_loader: loaded meta data with 33 key-value pairs and 272 tensors from models/smollm2-135m-instruct-q4_1.gguf (version GGUF V3 (latest))
print_info: file size   = 92.10 MiB (5.74 BPW)
load_tensors: offloading 19 repeating layers to GPU
load_tensors: offloaded 20/31 layers to GPU
load_tensors:        CUDA0 model buffer size =    60.00 MiB
load_tensors:   CPU_Mapped model buffer size =    32.10 MiB
llama_context: n_ctx         = 2048
llama_context: n_ubatch      = 512
llama_context: flash_attn    = auto
llama_kv_cache:      CUDA0 KV buffer size =    30.00 MiB
llama_kv_cache:        CPU KV buffer size =    15.00 MiB
llama_kv_cache: size =   45.00 MiB (  2048 cells,  30 layers,  1/1 seqs), K (f16):   22.50 MiB, V (f16):   22.50 MiB
llama_context:      CUDA0 compute buffer size =   100.00 MiB
srv  print_timing: id  0 | task 0 |        eval time =    2150.32 ms /   256 tokens (    8.40 ms per token,   119.05 tokens per second)
"""


@pytest.fixture
def unmeasured_workdir(tmp_path, monkeypatch) -> Path:
    """A folder with models/<the logs' model names> and logs/ (a link to the recorded logs); the current directory."""
    write_recorded_models(tmp_path / "models")
    (tmp_path / "logs").symlink_to(LOGS, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def workdir(unmeasured_workdir, measured_machine) -> Path:
    """The same, with this machine's figures kept as a first command leaves them (conftest's measured_machine):
    the evidence commands read them rather than each probing again in its own fresh data folder."""
    return unmeasured_workdir


@pytest.mark.parametrize("name", LOG_FILES)
def test_evidence_reads_every_recorded_log(workdir, capsys, name):
    assert main(["evidence", f"logs/{name}", *TYPED_RAM, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in d["rows"]}
    assert d["model"].endswith(f"{'gemma3-270m-q4_k_m' if model_of(name) == 'gemma3' else 'smollm2-135m-instruct-q4_1'}.gguf")
    assert d["dry_run"] is name.startswith("fitparams")
    assert rows["compute"]["error"] is not None and abs(rows["compute"]["error"]) <= 0.015
    if not d["dry_run"]:
        assert rows["KV"]["error"] == 0.0 and rows["weights"]["error"] == 0.0
        assert abs(rows["peak RSS"]["error"]) <= 0.10
    assert d["engine"].startswith("llama.cpp 0c1e570")


def _timing(name: str, prompt: bool) -> tuple[float, int] | None:
    """The (tokens/s, tokens) of the log's `eval time` or `prompt eval time` line, read here by hand."""
    pattern = r"(prompt )?eval time = +[\d.]+ ms / +(\d+) (?:tokens|runs) .*?([\d.]+) tokens per second"
    found = [(float(tps), int(n)) for p, n, tps in re.findall(pattern, (LOGS / name).read_text()) if bool(p) == prompt]
    return found[-1] if found else None


@pytest.mark.parametrize("name", LOG_FILES)
def test_the_speed_rows_are_llama_cpps_timings_beside_the_estimates_at_the_runs_position(workdir, capsys, name):
    assert main(["evidence", f"logs/{name}", *TYPED_RAM, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in d["rows"]}
    decode, prefill, estimate = rows["decode"], rows["prefill"], d["tok_s_estimate"]
    assert decode["unit"] == prefill["unit"] == "tokens/s" and "bound" not in decode
    assert estimate["measured"] is False and estimate["kind"] == "estimate"
    assert estimate["bandwidths"]["ram"] == {"bytes_per_s": 20 * 1024**3, "source": "typed",
                                             "detail": "entered by hand", "measured_at": None, "date": None}
    assert decode["estimated"] == estimate["tok_s"] > 0
    assert prefill["estimated"] == estimate["prefill"]["tok_s"] > 0
    timed = {"decode": _timing(name, prompt=False), "prefill": _timing(name, prompt=True)}
    for row in (decode, prefill):
        measured = timed[row["name"]]
        if d["dry_run"]:
            assert measured is None and row["measured"] is None and row["share"] is None and row["error"] is None
        else:
            assert row["measured"] == measured[0]
            assert row["share"] == pytest.approx(row["measured"] / row["estimated"])
            assert row["error"] == pytest.approx((row["estimated"] - row["measured"]) / row["measured"])
    if not d["dry_run"]:
        prompt, generated = timed["prefill"][1], timed["decode"][1]
        assert estimate["prefill"]["prompt_tokens"] == prompt  # the run's own prompt, and its own position:
        spec = load_model(d["model"])
        kv = kv_price(spec, d["settings"]["kv_type"]).at(prompt + generated // 2)
        assert estimate["bytes_per_token"]["total"] == TokenPrices.of(spec).read_per_token(kv)
    assert all(r["share"] is None for r in d["rows"] if r["unit"] != "tokens/s")


def _fit_estimate(*args: str) -> dict:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        main(["fit", *args, *TYPED_RAM, "--json"])
    return json.loads(out.getvalue())["tok_s_estimate"]


@pytest.mark.parametrize("name", [n for n in LOG_FILES if "swafull" not in n])
def test_the_estimates_are_fits_for_the_logs_ctx_kv_and_gpu_layers(workdir, capsys, name):
    """The same call as `fit` (fit_speed): at a full context, where neither depends on the run's position, equal to
    the last digit. (`fit` has no --swa-full, hence no swafull logs.)"""
    assert main(["evidence", f"logs/{name}", *TYPED_RAM, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    s = d["settings"]
    fit = _fit_estimate(d["model"], "--ctx", str(s["ctx"]), "--kv-type", s["kv_type"], "--gpu-layers",
                        str(s["gpu_layers"]), "--host-available", "64G", "--no-gpu")
    assert d["tok_s_estimate"]["tok_s_full_context"] == fit["tok_s_full_context"]
    assert d["tok_s_estimate"]["bytes_per_token_full_context"] == fit["bytes_per_token_full_context"]


def test_a_full_size_swa_cache_slows_the_full_context(workdir, capsys):
    """The log's --swa-full reaches the estimate: with the context full, every token reads the larger cache."""
    estimates = {}
    for name in ("gemma3-270m-q4_k_m_ctx2048_f16.log", "gemma3-270m-q4_k_m_ctx2048_f16_swafull.log"):
        assert main(["evidence", f"logs/{name}", *TYPED_RAM, "--json"]) == 0
        d = json.loads(capsys.readouterr().out)
        estimates[d["settings"]["swa_full"]] = d["tok_s_estimate"]
    assert (estimates[True]["bytes_per_token_full_context"]["ram"]
            > estimates[False]["bytes_per_token_full_context"]["ram"])
    assert estimates[True]["tok_s_full_context"] < estimates[False]["tok_s_full_context"]


def test_an_offloaded_run_is_estimated_with_fits_vram_and_ram_bandwidths(workdir, capsys):
    (workdir / "gpu.log").write_text(SMOLLM2_ON_A_GPU)
    assert main(["evidence", "gpu.log", *TYPED_RAM, "--vram-bw", "400G", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    estimate = d["tok_s_estimate"]
    assert d["settings"]["gpu_layers"] == 20 and estimate["bytes_per_token"]["vram"] > 0
    assert estimate["bandwidths"]["vram"]["bytes_per_s"] == 400 * 1024**3
    fit = _fit_estimate("models/smollm2-135m-instruct-q4_1.gguf", "--ctx", "2048", "--gpu-layers", "20",
                        "--host-available", "64G", "--gpu-total", "64G", "--vram-bw", "400G")
    rows = {r["name"]: r for r in d["rows"]}
    assert estimate["tok_s_full_context"] == fit["tok_s_full_context"]
    assert rows["decode"]["measured"] == 119.05 and rows["decode"]["share"] == pytest.approx(119.05 / estimate["tok_s"])
    assert rows["prefill"]["estimated"] is None and rows["prefill"]["measured"] is None  # no GPU compute rate


def test_without_measuring_the_estimate_rests_on_the_assumed_figure(unmeasured_workdir, capsys):
    assert main(["evidence", "logs/smollm2-135m-instruct-q4_1_ctx512_f16.log", "--no-measure", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["tok_s_estimate"]["bandwidths"]["ram"]["source"] == "assumed" and d["bandwidth_notes"] == []


def test_evidence_text_is_a_table_of_measured_and_estimated(workdir, capsys):
    assert main(["evidence", "logs/gemma3-270m-q4_k_m_ctx2048_f16.log", *TYPED_RAM]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Log       gemma3-270m-q4_k_m_ctx2048_f16.log — llama.cpp b1-0c1e570: llama-cli -m")
    settings = next(line for line in out if line.startswith("Settings"))
    assert "ctx 2048, f16 cache, 0 GPU layers, ubatch 512, 1 output row(s), flash attention on, mmap" in settings
    table = {line.split()[0]: line for line in out[3:out.index("")]}
    assert table["repacked"].split()[1:5] == ["12.66", "MiB", "12.66", "MiB"]
    assert table["KV"].split()[1:] == ["21.00", "MiB", "21.00", "MiB", "+0.0%"]
    decode = table["decode"].split()
    assert decode[1:4] == ["45.27", "tok/s", "≈"] and decode[5] == "tok/s"
    assert " (measured " in table["decode"] and table["decode"].endswith("% of the estimate)")
    assert table["prefill"].split()[1:4] == ["401.75", "tok/s", "≈"]
    block = out[out.index("Speed estimate (full load at the log's settings and position)"):]
    assert "per token at the start, at 20.00 GiB/s (typed: entered by hand)" in block[1]
    flat = " ".join(" ".join(block).split())  # the text wraps at 100 columns
    assert re.search(r"decode ≈ [^()]* \(estimate, default calibration from", flat)
    assert re.search(r"first token after ≈ \S+ s for a 29-token prompt", flat)


def test_a_dry_run_shows_the_estimates_and_no_measured_speed(workdir, capsys):
    assert main(["evidence", "logs/fitparams_smollm2-135m-instruct-q4_1_ctx2048_f16.log", *TYPED_RAM]) == 0
    lines = capsys.readouterr().out.splitlines()
    decode = next(line for line in lines if line.startswith("decode "))
    prefill = next(line for line in lines if line.startswith("prefill "))
    assert decode.split()[1:3] == ["—", "≈"] and decode.endswith("not measured: the log has no `eval time` line")
    assert prefill.split()[1:3] == ["—", "≈"]
    assert prefill.endswith("not measured: the log has no `prompt eval time` line")


def test_evidence_finds_the_model_beside_the_log(tmp_path, capsys, monkeypatch, measured_machine):
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
    (["logs/no-such.log"], "no such file: logs/no-such.log"),
    (["logs"], "cannot read logs"),
])
def test_bad_input_is_one_line_and_exit_2(workdir, capsys, args, message):
    assert main(["evidence", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("args", [["--ram-bw", "0"], ["--vram-bw", "fast"], ["--disk-bw", "2G"]])
def test_bad_bandwidth_options_exit_2_in_one_line(workdir, capsys, args):
    """`fit`'s bandwidth flags, checked as `fit` checks them; a full load reads nothing from disk, so no --disk-bw."""
    with pytest.raises(SystemExit) as info:
        main(["evidence", "logs/smollm2-135m-instruct-q4_1_ctx512_f16.log", *args])
    assert info.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_log_whose_model_is_not_here_asks_for_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(LOGS / "gemma3-270m-q4_k_m_ctx512_f16.log", tmp_path)
    assert main(["evidence", "gemma3-270m-q4_k_m_ctx512_f16.log"]) == 2
    assert "names models/gemma3-270m-q4_k_m.gguf, which is not here: pass --model FILE" in capsys.readouterr().err


def test_fit_json_and_text_itemize_what_llama_cpp_holds(gguf_file, capsys, measured_machine):
    path = gguf_file(ArchDesc(n_layer=4, n_vocab=8192), mode="header_only")
    assert main(["fit", str(path), "--ctx", "2048", "--host-available", "16G", "--no-gpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["runtime_memory"]
    host = d["devices"][0]
    assert host["name"] == "host" and host["file_backed"] == host["mapped_weights"] > 0
    assert host["anonymous"] == host["kv"] + host["output"] + host["compute"] + host["repack"]  # reserved
    full = d["full"]
    assert d["peak_rss"] == d["peak_rss_full"] == full["total"] == full["anonymous"] + host["mapped_weights"]
    assert full["anonymous"] == sum(full[k] for k in ("loaded_weights", "repack", "kv", "output", "compute", "work",
                                                       "checkpoints", "process", "sampler", "kv_cells"))
    assert d["peak_rss_short"] <= d["peak_rss_full"] and d["runtime"] == "llama-server"
    assert host["output"] == 8192 * 4 and d["settings"]["ubatch"] == 512
    assert "weights + KV + compute buffer" in d["verdict_basis"]
    assert main(["fit", str(path), "--ctx", "2048", "--host-available", "16G", "--no-gpu"]) == 0
    text = capsys.readouterr().out
    assert "Peak RSS" in text and "anonymous" in text and "mapped weights (file-backed)" in text


def test_a_hostile_log_name_prints_escaped(tmp_path, capsys, monkeypatch, measured_machine):
    """The report quotes the log's file name, which a stranger may have chosen."""
    write_recorded_models(tmp_path / "runs" / "models")
    shutil.copy(LOGS / "smollm2-135m-instruct-q4_1_ctx512_f16.log", tmp_path / "runs" / "run\x1b[2J\u202e.log")
    monkeypatch.chdir(tmp_path)
    assert main(["evidence", "runs/run\x1b[2J\u202e.log"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "run\\x1b[2J\\u202e.log" in out.splitlines()[0]
