"""`gguf-budget hw` and `gguf-budget fit`: this machine's real figures, the JSON contract, the
hypothetical-machine flags and the exit codes (0 admitted, 2 bad input, 3 does not fit / unknown)."""

from __future__ import annotations

import json
import subprocess
import sys

import psutil
import pytest
from command_parse import parse_llama_server
from gguf_factory import ArchDesc

from gguf_budget.core import load_model
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.machine_view import NO_GPU_WORDS
from gguf_budget.gui.cli import main

GiB = 1024**3
SNAPSHOT_KEYS = {"captured_at", "host_total", "host_available", "cgroup_limit", "gpus", "gpu_error"}
FIT_KEYS = {"snapshot", "reserves", "n_layer", "gpu_layers", "auto_gpu_layers", "weights", "kv", "verdict",
            "shortfall", "unknowns", "claims"}
WEIGHT_KEYS = {"file_bytes", "gpu_coarse", "host_coarse", "gpu_exact", "host_exact"}
KV_KEYS = {"lower_bound", "engine", "attention_layers", "swa_layers", "recurrent_layers", "recurrent_state", "gpu", "host"}
MODEL = ArchDesc(n_layer=4, n_vocab=8192)


def test_fit_on_this_machine_says_no_gpu_plainly_without_the_drivers_detail(capsys, gguf_file):
    """'No GPU found — everything runs on the CPU' reads as a fact; NVML's complaint (say, its library is
    not installed) would read like something to fix, so only `hw` shows it."""
    probed = probe_hardware()
    if probed.gpus:
        pytest.skip("this machine has a GPU")
    assert main(["fit", str(gguf_file(MODEL)), "--no-measure"]) == 0
    out = capsys.readouterr().out
    assert f"GPU         {NO_GPU_WORDS}" in out
    assert probed.gpu_error is None or probed.gpu_error not in out
    assert "NVML" not in out


def test_hw_prints_this_machines_real_ram_and_its_gpus_or_why_there_are_none(capsys):
    assert main(["hw"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the text wraps at 100 columns
    probed = probe_hardware()
    assert 0 < probed.host_total <= psutil.virtual_memory().total
    assert f"of {human_bytes(probed.host_total)} total" in out
    if probed.gpus:
        assert all(f"GPU {g.index}" in out and g.name in out for g in probed.gpus)
    else:
        assert f"{NO_GPU_WORDS} ({probed.gpu_error})" in out           # `hw` alone carries the driver's detail


def test_hw_json_has_the_snapshot_keys(capsys):
    assert main(["hw", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert SNAPSHOT_KEYS <= set(d) and d["source"] == "probe"
    assert d["host_total"] == min(psutil.virtual_memory().total, d["cgroup_limit"] or psutil.virtual_memory().total)
    assert d["gpus"] or d["gpu_error"]


def test_hw_runs_as_a_console_command_without_qt():
    probe = ("import sys; from gguf_budget.gui.cli import main; rc = main(['hw']); "
             "print(any(m.startswith('PySide6') for m in sys.modules)); sys.exit(rc)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip().endswith("False")


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_fit_json_has_the_contract_keys(gguf_file, capsys):
    path = gguf_file(MODEL, "complete")
    args = ["fit", str(path), "--ctx", "1000", "--host-available", "32G", "--gpu-total", "8G", "--gpu-free", "6G", "--json"]
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert FIT_KEYS <= set(d) and SNAPSHOT_KEYS <= set(d["snapshot"])
    assert WEIGHT_KEYS <= set(d["weights"]) and KV_KEYS <= set(d["kv"])
    assert set(d["claims"]) == {"file_size", "admission", "runtime_evidence"} and d["claims"]["runtime_evidence"] is None
    assert d["snapshot"]["source"] == "hypothetical" and d["snapshot"]["host_available"] == 32 * GiB
    assert [(g["index"], g["total"], g["free"]) for g in d["snapshot"]["gpus"]] == [(0, 8 * GiB, 6 * GiB)]
    assert (d["reserves"], d["n_layer"], d["verdict"], d["gpu_layers"]) == (
        {"host": 6 * GiB, "gpu": 3 * GiB // 2, "per_device": {"host": 6 * GiB, "gpu0": 3 * GiB // 2}}, 4, "fits_gpu", 5)
    assert d["kv"]["engine"] == 4 * 1024 * 2 * (16 + 16) * 2 and d["shortfall"] == {}
    assert d["weights"]["gpu_exact"] + d["weights"]["host_exact"] == load_model(path).tensor_bytes
    assert d["weights"]["file_bytes"] == path.stat().st_size


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
@pytest.mark.parametrize(
    ("flags", "code", "verdict"),
    [
        (["--host-available", "32G", "--no-gpu"], 0, "cpu_only"),
        (["--host-available", "32G", "--gpu-free", "1.6G", "--gpu-layers", "2"], 0, "fits_split"),
        (["--host-available", "6G", "--no-gpu"], 3, "does_not_fit"),
        (["--host-available", "32G", "--gpu-free", "1.5G", "--gpu-layers", "2"], 3, "does_not_fit"),
        (["--host-available", "6.1G", "--no-gpu", "--host-reserve", "0"], 0, "cpu_only"),
        (["--host-available", "32G", "--gpu-count", "4", "--gpu-total", "2G"], 0, "fits_gpu"),
    ],
)
def test_fit_verdicts_and_exit_codes(gguf_file, capsys, flags, code, verdict):
    path = gguf_file(MODEL, "header_only")
    assert main(["fit", str(path), "--ctx", "512", *flags, "--json"]) == code
    assert json.loads(capsys.readouterr().out)["verdict"] == verdict


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_fit_text_keeps_the_three_claims_apart(gguf_file, capsys):
    path = gguf_file(MODEL, "header_only")
    assert main(["fit", str(path), "--host-available", "32G", "--gpu-free", "4G"]) == 0
    out = capsys.readouterr().out
    assert "by file share" in out and "exact inventory" in out and "FP16 lower bound" in out
    assert "coarse gate" not in out and "seed" not in out
    assert "storage only" in out and "admission estimate" in out and "runtime evidence: none" in out
    assert "hypothetical machine" in out and "fits on GPU" in out


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_fit_on_this_machine_without_gpu_flags_probes_it(gguf_file, capsys):
    path = gguf_file(MODEL, "header_only")
    assert main(["fit", str(path), "--json"]) in (0, 3)
    d = json.loads(capsys.readouterr().out)
    assert d["snapshot"]["source"] == "probe" and d["snapshot"]["host_total"] == probe_hardware().host_total


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_an_unknown_verdict_exits_3_and_says_what_is_missing(gguf_file, capsys):
    path = gguf_file(ArchDesc(arch="mamba", n_layer=2), "header_only")  # recurrent, but no SSM sizes
    assert main(["fit", str(path), "--host-available", "32G", "--no-gpu"]) == 3
    out = capsys.readouterr().out
    assert "unknown — recurrent state: the file lacks the SSM/RWKV state sizes" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--gpu-count", "2"], "--gpu-count needs --gpu-total or --gpu-free"),
        (["--no-gpu", "--gpu-free", "4G"], "--no-gpu cannot be combined"),
        (["--gpu-total", "4G", "--gpu-free", "8G"], "between 0 and its total"),
    ],
)
def test_contradictory_machine_flags_exit_2_with_one_line(gguf_file, capsys, flags, message):
    path = gguf_file(MODEL, "header_only")
    assert main(["fit", str(path), "--host-available", "32G", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("flags", [["--ctx", "0"], ["--gpu-layers", "-1"], ["--host-available", "lots"],
                                   ["--kv-type", "q3_k"]])
def test_bad_values_are_refused_by_the_parser(gguf_file, capsys, flags):
    path = gguf_file(MODEL, "header_only")
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(path), *flags])
    assert exc.value.code == 2


def test_fit_of_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "nope.gguf"), "--host-available", "1G", "--no-gpu"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_fit_without_ctx_answers_as_llama_cpps_default_fit_and_prints_a_command_that_fits(capsys):
    """#20's first counterexample: on 22 GiB the trained 131,072 of Llama-3.1-8B does not fit, llama.cpp's default
    fit shrinks the context instead of giving up — so `fit` says "fits" at the largest ctx ≥ 4096 that does, and
    the command it prints carries that ctx."""
    args = ["fit", "--catalog", "llama-3.1-8b-instruct", "--host-available", "22G", "--no-gpu", "--no-measure"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "cpu_only" and d["ctx_reason"] == "shrunk" and 4096 <= d["ctx"] < 131_072
    assert d["ctx"] % 256 == 0 and d["command"]["argv"][d["command"]["argv"].index("-c") + 1] == str(d["ctx"])
    assert main([*args, "--ctx", str(d["ctx"] + 256), "--json"]) == 3  # one step more does not fit
    capsys.readouterr()
    assert main([*args, "--print-command"]) == 0
    printed = parse_llama_server(capsys.readouterr().out.strip())
    assert printed.ctx == d["ctx"] and printed.gpu_layers == 0
    assert main(args) == 0
    assert (f"Verdict fits CPU-only — everything in host RAM (slowest) at ctx {d['ctx']:,} (the trained 131,072 "
            "does not fit)") in " ".join(capsys.readouterr().out.split())  # the text wraps at 100 columns


def test_when_nothing_fits_fit_says_why_exits_3_and_prints_no_command(capsys):
    args = ["fit", "--catalog", "llama-3.1-8b-instruct", "--host-available", "4G", "--no-gpu", "--no-measure"]
    assert main([*args, "--print-command"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "no command to print — does not fit — host short by" in err and "at ctx 4,096 (the least" in err
    assert main([*args, "--json"]) == 3
    d = json.loads(capsys.readouterr().out)
    assert (d["verdict"], d["ctx"], d["ctx_reason"], d["command"]) == ("does_not_fit", 4096, "floor", None)
    assert main(args) == 3
    text = capsys.readouterr().out
    assert "Command" not in text and "llama-server -m" not in text
