"""`gguf-budget quants`: the ladder from a file or a catalogue skeleton, as text or JSON; clean failures."""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc

from gguf_budget.gui.cli import main

MACHINE_70B = ["--gpu-total", "24G", "--host-available", "64G"]


def test_70b_with_a_24_gib_gpu_and_64_gib_ram_marks_a_best_fit(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B]) == 0
    out = capsys.readouterr().out
    assert "IQ2_XXS" in next(line for line in out.splitlines() if "◀ best fit" in line)
    assert sum("does not fit" in line for line in out.splitlines()) >= 1
    assert "Best fit: IQ2_XXS — the highest precision that runs fully on GPU at ctx 4,096" in out
    assert "hypothetical machine" in out


def test_json_carries_every_row_and_the_machine(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, "--json", "--budget", "32G"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["best_fit"] == "IQ2_XXS" and payload["budget_bytes"] == 32 * 1024**3
    assert payload["machine"]["source"] == "hypothetical"
    assert {r["verdict"] for r in payload["rows"]} >= {"does_not_fit", "fits_gpu"}
    assert all(r["plan"] is not None for r in payload["rows"])


def test_a_file_of_any_quantization_is_priced(capsys, gguf_file):
    path = gguf_file(ArchDesc(n_layer=4, n_embd=256, n_ff=512, n_head=8, n_head_kv=2, n_vocab=512))
    assert main(["quants", str(path), "--no-gpu", "--host-available", "16G", "--json", "--no-imatrix"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["source_file_type"] == "Q8_0" and payload["imatrix"] is False
    assert payload["best_fit"] == "BF16" and payload["best_fit_reason"] == "fully in RAM"


def test_nothing_fits_exits_3(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", "--no-gpu", "--host-available", "8G"]) == 3
    assert "Best fit: none" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["quants"], "give a FILE, or --catalog NAME"),
    (["quants", "a.gguf", "--catalog", "phi-4"], "not both"),
    (["quants", "--catalog", "llama-2-7b"], "choose one of"),
    (["quants", "missing.gguf"], "missing.gguf"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["--ctx", "0"], ["--budget", "lots"], ["--gpu-total", "-1"]])
def test_bad_arguments_exit_2_in_one_line(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(["quants", "--catalog", "phi-4", *argv])
    assert stop.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_preset_machine_is_judged_like_fit_judges_it(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", "--preset", "RTX 4090", "--host-available", "64G",
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["machine"]["gpus"][0]["name"] == "RTX 4090" and payload["best_fit"] == "IQ2_XXS"
