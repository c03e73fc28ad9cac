"""`fit --preset`, `-ts`, `--gpu-reserves`, `--print-command` and `hw --presets`: the GPU vocabulary of the
command line, and commands whose flags parse back to the placement the fit printed."""

from __future__ import annotations

import json

import pytest
from command_parse import gpu_weights_with_cpu_moe, parse_llama_server
from gguf_factory import ArchDesc

from gguf_budget.core import load_model
from gguf_budget.core.machine.presets import PRESETS
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

GiB = 1024**3
QWEN = str(catalogue_path(find_entry("qwen3-30b-a3b-instruct-2507")))


def fit_json(capsys, *args: str) -> dict:
    assert main(["fit", *args, "--json"]) in (0, 3)
    return json.loads(capsys.readouterr().out)


def rows(text: str) -> dict[str, str]:
    """The text table's rows by label (labels are padded to one column; continuation rows have none)."""
    first = text.splitlines()[0]
    column = len(first) - len(first[len(first.split("  ")[0]):].lstrip())
    return {line[:column].strip(): line[column:] for line in text.splitlines() if line[:column].strip()}


def assert_command_parses_back(capsys, d: dict, path: str, extra: tuple[str, ...] = ()) -> None:
    """The recommended command's flags, fed back to `fit`, give the placement the JSON reported."""
    back = parse_llama_server(d["command"]["llama_server"])
    assert back.model == path and back.ctx == d["ctx"]
    again = fit_json(capsys, path, "--ctx", str(back.ctx), "--gpu-layers", str(back.gpu_layers), *extra)
    if back.n_cpu_moe:
        m = d["moe_n_cpu"]
        assert (back.gpu_layers, back.n_cpu_moe) == (m["gpu_layers"], m["n_cpu_moe"])
        spec = load_model(path)
        for dev in m["devices"][1:]:
            assert gpu_weights_with_cpu_moe(spec, tuple(dev["slots"]), back.n_cpu_moe) == dev["weights"]
    else:
        # each device's placement and need; not its total, a fact of the machine (a typed host's is what it was given)
        placed = [[{k: v for k, v in dev.items() if k != "total"} for dev in x["devices"]] for x in (again, d)]
        assert placed[0] == placed[1] and again["gpu_layers"] == d["gpu_layers"]


def test_preset_rtx_4090_on_qwen3_30b_a3b_at_32k(capsys):
    assert main(["fit", QWEN, "--preset", "RTX 4090", "--ctx", "32768"]) in (0, 3)
    text = capsys.readouterr().out
    r = rows(text)
    assert r["GPU 0"].startswith("RTX 4090 (NVIDIA, dedicated VRAM): 24.00 GiB free of 24.00 GiB")
    assert r["Verdict"].split(" — ")[0] in ("fits on GPU", "fits split", "fits CPU-only", "does not fit")
    if not r["Verdict"].startswith("fits on GPU"):
        assert "--n-cpu-moe" in r["MoE offload"]
    assert r["Command"].startswith("llama-server -m ")
    d = fit_json(capsys, QWEN, "--preset", "RTX 4090", "--ctx", "32768")
    assert d["command"]["llama_server"] in r["Command"]
    assert_command_parses_back(capsys, d, QWEN, ("--preset", "RTX 4090", "--host-available",
                                                 str(d["snapshot"]["host_available"])))


def test_when_all_gpu_does_not_fit_the_smallest_n_cpu_moe_is_printed_and_runs(capsys):
    # ctx 65536: weights 17.1 GiB + KV 6 GiB exceed the 4090's 22.5 usable GiB; with the 286 MiB compute buffer
    # llama.cpp reserves on the GPU counted too, three blocks' experts go to RAM (two left it short)
    args = [QWEN, "--preset", "RTX 4090", "--ctx", "65536", "--host-available", "64G"]
    assert main(["fit", *args]) == 0
    r = rows(capsys.readouterr().out)
    assert r["Verdict"].startswith("fits split")
    assert r["MoE offload"].startswith("smallest that fits: --n-cpu-moe 3 ")
    assert main(["fit", *args, "--print-command"]) == 0
    line = capsys.readouterr().out.strip()
    assert "-c 65536 -ngl 49 --n-cpu-moe 3 -np 1 --cache-ram " in line and "\n" not in line
    d = fit_json(capsys, *args)
    assert d["command"]["realises"] == "n_cpu_moe" and d["command"]["llama_server"] == line
    assert d["moe_n_cpu"]["n_cpu_moe"] == 3 and d["moe_n_cpu"]["command"]["llama_server"] == line
    assert_command_parses_back(capsys, d, QWEN, ("--preset", "RTX 4090", "--host-available", "64G"))


# A 32-block model on two hypothetical GPUs of 24 and 12 GiB (hand-worked in test_fit_placement): all 33 slots
# offloaded; by free memory GPU 0 takes j/33 < 24/36 → 22 slots (blocks 0–21), GPU 1 11 (blocks 22–31 + output);
# -ts 1,1: j/33 < 1/2 → 17 and 16.
@pytest.mark.parametrize(("split", "slots"), [((), [[0, 22], [22, 33]]), (("-ts", "1,1"), [[0, 17], [17, 33]])])
def test_two_gpus_of_24_and_12_gib_split_as_llama_cpp_does(gguf_file, capsys, split, slots):
    path = str(gguf_file(ArchDesc(n_layer=32, n_vocab=512)))
    d = fit_json(capsys, path, "--ctx", "512", "--preset", "RTX 3090,RTX 3060", "--host-available", "64G", *split)
    assert [g["total"] for g in d["snapshot"]["gpus"]] == [24 * GiB, 12 * GiB]
    assert [dev["slots"] for dev in d["devices"][1:]] == slots and d["gpu_layers"] == 33
    assert d["tensor_split"] == ([1.0, 1.0] if split else None)
    argv = d["command"]["argv"]
    assert argv[argv.index("-np") - 2:argv.index("-np")] == (["-ts", "1,1"] if split else ["-ngl", "33"])
    assert_command_parses_back(capsys, d, path, ("--preset", "RTX 3090,RTX 3060", "--host-available", "64G", *split))


def test_a_machine_preset_is_a_whole_unified_machine(gguf_file, capsys):
    d = fit_json(capsys, str(gguf_file(ArchDesc(n_layer=4))), "--ctx", "512", "--preset", "m2 max 96gb")
    assert d["snapshot"]["host_total"] == 96 * GiB and d["snapshot"]["source"] == "hypothetical"
    gpu = d["snapshot"]["gpus"][0]
    assert (gpu["memory"], gpu["total"], gpu["bandwidth"]) == ("unified", 72 * GiB, 400 * 10**9)
    assert d["devices"][0]["shared"] == d["devices"][1]["need"] > 0  # one pool


def test_per_gpu_reserves(gguf_file, capsys):
    d = fit_json(capsys, str(gguf_file(ArchDesc(n_layer=4))), "--ctx", "512", "--preset", "RTX 3090,RTX 3060",
                 "--host-available", "64G", "--gpu-reserves", "0,2G")
    assert d["reserves"]["per_device"] == {"host": 6 * GiB, "gpu0": 0, "gpu1": 2 * GiB}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--preset", "RTX 9999"], "no preset 'RTX 9999'; choose one of: RTX 2070, RTX 3060, "),
        (["--preset", "RTX 4090", "--gpu-total", "8G"], "--preset cannot be combined with"),
        (["--preset", "M2 Max 96GB,RTX 4090"], "a machine preset (Apple, Ryzen AI Max) is a whole machine"),
        (["-ts", "1,x"], "not a list of shares: '1,x'"),
        (["-ts", "1,-1"], "shares must be numbers of 0 or more"),
        (["-ts", ",".join(["1"] * 16)], "a tensor split is 1 to 15 shares"),
        (["--gpu-reserves", "1G,lots"], "not a size: 'lots'"),
        (["--print-command", "--json"], "not allowed with argument"),
    ],
)
def test_bad_gpu_flags_are_one_line_and_exit_2(gguf_file, capsys, flags, message):
    try:
        code = main(["fit", str(gguf_file(ArchDesc(n_layer=2))), "--host-available", "8G", *flags])
    except SystemExit as e:  # argparse's own errors leave through exit(2)
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_command_that_does_not_fit_is_not_printed_and_the_reason_is(gguf_file, capsys):
    assert main(["fit", str(gguf_file(ArchDesc(n_layer=2))), "--host-available", "1G", "--no-gpu",
                 "--print-command"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and "no command to print — does not fit" in err


def test_hw_lists_the_presets_with_their_sources(capsys):
    assert main(["hw", "--presets"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert all(p.name in text and " ".join(p.source.split()) in text for p in PRESETS)
    assert main(["hw", "--presets", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert {"RTX 4090", "A100 SXM 80GB", "RX 7900 XTX", "Arc A770 16GB", "M2 Ultra 76-core 192GB", "Ryzen AI Max+ 395 128GB"} <= {
        t["name"] for t in table}
    assert next(t for t in table if t["name"] == "RTX 4090")["bandwidth"] == 1008 * 10**9
