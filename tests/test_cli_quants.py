"""`gguf-budget quants`: the ladder from a file or a catalogue skeleton, as text or JSON; clean failures."""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc

from gguf_budget.gui.cli import main

MACHINE_70B = ["--gpu-total", "24G", "--host-available", "64G"]


def _rows(out: str) -> list[str]:
    """The text's lines, a row's marks (printed under a row too wide for them) joined back onto it."""
    rows: list[str] = []
    for line in out.splitlines():
        if line.startswith("    ") and rows:
            rows[-1] += "  " + line.strip()
        else:
            rows.append(line)
    return rows


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_70b_with_a_24_gib_gpu_and_64_gib_ram_marks_a_best_fit(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B]) == 0
    out = capsys.readouterr().out
    assert "IQ2_XXS" in next(line for line in _rows(out) if "◀ best fit" in line)
    assert sum("does not fit" in line for line in out.splitlines()) >= 1
    assert "Best fit: IQ2_XXS — the highest precision that runs fully on GPU at ctx " in out
    assert "at the ctx llama.cpp's own fit chooses for each type" in out
    assert "hypothetical machine" in out


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_json_carries_every_row_and_the_machine(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, "--json", "--budget", "32G"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["best_fit"] == "IQ2_XXS" and payload["budget_bytes"] == 32 * 1024**3
    assert payload["machine"]["source"] == "hypothetical"
    assert {r["verdict"] for r in payload["rows"]} >= {"does_not_fit", "fits_gpu"}
    assert all(r["plan"] is not None for r in payload["rows"])


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_a_file_of_any_quantization_is_priced(capsys, gguf_file):
    path = gguf_file(ArchDesc(n_layer=4, n_embd=256, n_ff=512, n_head=8, n_head_kv=2, n_vocab=512))
    assert main(["quants", str(path), "--no-gpu", "--host-available", "16G", "--json", "--no-imatrix"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["source_file_type"] == "Q8_0" and payload["imatrix"] is False
    assert payload["best_fit"] == "BF16" and payload["best_fit_reason"] == "fully in RAM"


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
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


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_a_preset_machine_is_judged_like_fit_judges_it(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", "--preset", "RTX 4090", "--host-available", "64G",
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["machine"]["gpus"][0]["name"] == "RTX 4090" and payload["best_fit"] == "IQ2_XXS"


SPEED = ["--no-measure", "--ram-bw", "30G", "--vram-bw", "900G"]


def _json(capsys, argv):
    main(argv)
    return json.loads(capsys.readouterr().out)


def test_each_row_decodes_at_the_speed_fit_prints_for_that_file(capsys):
    """The 70B skeleton is a Q4_K_M file priced byte for byte by its own row, so `fit` at the ladder's ctx
    must print that row's estimate: the same call, the same JSON."""
    ladder = _json(capsys, ["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, *SPEED, "--json"])
    fit = _json(capsys, ["fit", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, *SPEED, "--ctx", "4096",
                         "--json"])
    source = next(r for r in ladder["rows"] if r["source"])
    assert source["tok_s_estimate"] == fit["tok_s_estimate"] and source["tok_s_estimate"] is not None
    assert source["tok_s_estimate"]["bandwidths"]["vram"]["source"] == "typed"
    assert ladder["bandwidth_notes"] == [] and source["plan_tok_s_estimate"] is None
    assert {r["file_type"] for r in ladder["rows"] if r["tok_s_estimate"] is None} == {"BF16", "F16"}


def test_each_budget_plan_decodes_at_the_speed_plan_prints(capsys):
    disk = ["--disk-bw", "3G"]
    ladder = _json(capsys, ["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, *SPEED, *disk,
                            "--budget", "32G", "--json"])
    plan = _json(capsys, ["plan", "--catalog", "llama-3.1-70b-instruct", "--budget", "32G", "--host-available", "64G",
                          *SPEED[:3], *disk, "--json"])
    source = next(r for r in ladder["rows"] if r["source"])
    assert source["plan"]["n_pinned"] == plan["n_pinned"] and source["plan"]["ctx"] == plan["ctx"]
    assert source["plan_tok_s_estimate"] == plan["tok_s_estimate"]
    assert source["plan_tok_s_estimate"]["stream_from"] == "page_cache"


def test_text_has_a_decode_column_that_says_what_it_is(capsys):
    assert main(["quants", "--catalog", "llama-3.1-70b-instruct", *MACHINE_70B, *SPEED]) == 0
    out = capsys.readouterr().out
    lines = _rows(out)
    assert "Decode" in lines[0].split()
    best = next(line for line in lines if "◀ best fit" in line)
    assert "≈ " in best and "tok/s" in best and "≤" not in out
    out = " ".join(out.split())  # the footnotes wrap at 100 columns
    assert "Decode: each full load's tokens/s at the start of a conversation (estimates, default calibration" in out
    assert "at RAM 30.00 GiB/s (typed" in out and "First token: the full load's prefill of a 1,000-token prompt" in out
    assert "VRAM 900.00 GiB/s (typed" in out
    f16 = next(line for line in lines if line.startswith("F16 "))
    assert "tok/s" not in f16 and "does not fit" in f16


def test_an_8b_on_an_rtx_4090_recommends_q8_0_and_its_json_says_why(capsys):
    argv = ["quants", "--catalog", "llama-3.1-8b-instruct", "--preset", "RTX 4090", "--no-measure"]
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["best_fit"] == "BF16" and payload["recommended"] == "Q8_0"
    why = payload["recommendation"]
    assert why["tier"] == "fully on GPU" and why["slowdown_limit"] == 1.5
    assert [(p["file_type"], p["next_smaller"]) for p in why["passed_over"]] == [("BF16", "Q8_0"), ("F16", "Q8_0")]
    assert all(p["slowdown"] > 1.5 and p["basis"] == "decode estimate" for p in why["passed_over"])
    assert why["next_smaller"]["file_type"] == "Q8_0" and why["next_smaller"]["next_smaller"] == "Q6_K"
    assert why["next_smaller"]["slowdown"] <= 1.5 and why["heavy_quality_loss"] is False
    assert "passed over BF16" in payload["recommended_reason"] and why["rule"].startswith("How the recommended")
    assert [r["file_type"] for r in payload["rows"] if r["recommended"]] == ["Q8_0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("★ recommended") == 1 and "Recommended: Q8_0 — runs fully on GPU" in out


@pytest.mark.parametrize("available", ["12G", "20G", "40G"])
def test_a_machine_without_gpus_searches_no_rows_largest_ctx_its_auto_ctx_found(capsys, monkeypatch, available):
    """`quant.ladder` Rule 3: without GPUs the auto ctx's own search is the largest-ctx search for a row whose ctx
    shrank to a multiple of 256 or stayed at the ceiling; only the other rows search, and every row's largest ctx is
    the one a fresh search finds."""
    from gguf_budget.core.fit.ctx import max_ctx
    from gguf_budget.core.fit.ctx.auto_ctx import FitCtxReason
    from gguf_budget.core.quant import ladder

    searched = []
    monkeypatch.setattr(ladder, "largest_fitting_ctx", lambda *a: searched.append(a) or max_ctx.largest_fitting_ctx(*a))
    caught = []
    real_ladder = ladder.quant_ladder
    monkeypatch.setattr("gguf_budget.gui.cli.commands.quants_cmd.quant_ladder",
                        lambda *a, **k: caught.append(real_ladder(*a, **k)) or caught[-1])
    assert main(["quants", "--catalog", "llama-3.1-8b-instruct", "--no-gpu", "--no-measure",
                 "--host-available", available, "--json"]) in (0, 3)
    rows = caught[0].rows
    found = [r for r in rows if r.choice.reason in (FitCtxReason.CEILING, FitCtxReason.SHRUNK)]
    assert len(searched) == len(rows) - len(found)
    assert json.loads(capsys.readouterr().out)["machine"]["gpus"] == [] and found
    for row in found:
        fresh = max_ctx.largest_fitting_ctx(row.model, caught[0].snapshot, row.choice.fit.request, None, row.choice.ceiling)
        assert row.largest_ctx == fresh
