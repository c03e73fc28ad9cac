"""The command line's new words: --prefer, --ctx-cap, bandwidths; plan/fit/sweep JSON gain the speed keys."""

from __future__ import annotations

import json
import time

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx

from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.gui.cli import main

GiB = 1 << 30
MiB = 1 << 20
LLAMA8B = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
SMALL = ArchDesc(n_layer=8, n_embd=512, n_ff=1536, n_head=8, n_head_kv=4, n_vocab=32000, context_length=16384)
PLAN_KEYS = {"budget", "feasible", "overridden", "unlimited", "ctx", "ctx_capped", "ctx_explicit", "ctx_cap",
             "stream_lm_head", "n_buffers", "n_pinned", "n_layer", "kv_type", "weight_ceiling", "ledger", "total",
             "minimum_required", "minimum_ledger", "over_budget_by", "report"}


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_plan_json_keeps_every_key_and_adds_the_speed_keys(capsys):
    code, d = run_json(capsys, "plan", LLAMA8B, "--budget", "6G", "--no-measure")
    assert code == 0 and PLAN_KEYS <= set(d)
    assert {"ctx_policy", "ctx_cap", "ram_bytes_per_token", "stream_bytes_per_token", "tok_s_estimate"} <= set(d)
    assert (d["ctx_policy"], d["n_pinned"], d["stream_bytes_per_token"]) == ("speed", 32, 0)
    assert 11_000 <= d["ctx"] <= 12_288
    est = d["tok_s_estimate"]
    assert est["measured"] is False and est["kind"] == "estimate" and "bound" not in est
    assert {b["source"] for b in est["bandwidths"].values() if b} == {"assumed"}
    assert est["bytes_per_token"]["ram"] == d["ram_bytes_per_token"]
    assert est["tok_s_full_context"] < est["tok_s"] and est["ctx"] == d["ctx"]
    assert d["prompt_tokens"] == 1000 and d["ttft_s_estimate"] == est["prefill"]["ttft_s"] > 0
    assert d["prefill_tok_s_estimate"] == pytest.approx(1000 / d["ttft_s_estimate"])


def test_prefer_context_and_ctx_cap(capsys):
    assert run_json(capsys, "plan", LLAMA8B, "--budget", "6G", "--prefer", "context", "--no-measure")[1]["ctx"] == 40_832
    _, capped = run_json(capsys, "plan", LLAMA8B, "--budget", "6G", "--ctx-cap", "8192", "--no-measure")
    assert (capped["ctx"], capped["ctx_cap"], capped["n_pinned"]) == (8192, 8192, 32)


def test_an_impossible_plan_has_null_speed_keys(capsys):
    code, d = run_json(capsys, "plan", LLAMA8B, "--budget", "100M", "--no-measure")
    assert code == 3 and (d["ram_bytes_per_token"], d["stream_bytes_per_token"], d["tok_s_estimate"]) == (None,) * 3


def test_typed_bandwidths_and_free_ram_decide_the_stream_tier(capsys):
    args = ["plan", LLAMA8B, "--budget", "4G", "--ram-bw", "20G", "--disk-bw", "1G"]
    _, disk = run_json(capsys, *args, "--host-available", "4G")
    _, cached = run_json(capsys, *args, "--host-available", "64G")
    assert disk["tok_s_estimate"]["stream_from"] == "disk" and cached["tok_s_estimate"]["stream_from"] == "page_cache"
    assert disk["tok_s_estimate"]["bandwidths"]["stream"]["bytes_per_s"] == GiB
    assert cached["tok_s_estimate"]["tok_s"] > disk["tok_s_estimate"]["tok_s"]


def test_plan_text_ends_with_the_decode_estimate(capsys):
    assert main(["plan", LLAMA8B, "--budget", "4G", "--no-measure"]) == 0
    out = capsys.readouterr().out
    assert "Streaming ring    1 buffer(s) × 132.50 MiB = 132.50 MiB; requested 2, planned 1" in out
    assert "\nSpeed estimate\n" in out and "decode ≈ " in out and "(assumed:" in out and "≤ ~" not in out
    assert "first token after ≈ " in out and "for a 1,000-token prompt" in out


def test_measured_bandwidths_say_so_and_why_not(capsys):
    code, d = run_json(capsys, "plan", LLAMA8B, "--budget", "4G", "--host-available", "8G")
    assert code == 0 and d["tok_s_estimate"]["bandwidths"]["ram"]["source"] == "measured"
    assert d["bandwidth_notes"] == ["DISK not measured: llama-3.1-8b-instruct-q4_k_m.skeleton.gguf has no weights to "
                                    "read (header-only or sparse)"]


@pytest.mark.parametrize("args", [["--ram-bw", "0"], ["--disk-bw", "fast"], ["--prefer", "both"], ["--ctx-cap", "0"]])
def test_bad_speed_options_exit_2(capsys, args):
    with pytest.raises(SystemExit) as info:
        main(["plan", LLAMA8B, "--budget", "4G", *args])
    assert info.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_fit_without_ctx_shrinks_to_the_largest_that_fits_as_llama_cpp_does_and_says_so(capsys):
    """The trained 131,072 does not fit 16 GiB − 6 GiB; llama.cpp's default fit lowers the context, so `fit` answers
    with the largest multiple of 256 that fits (and an explicit ctx is judged exactly as asked)."""
    code, d = run_json(capsys, "fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--no-measure")
    assert code == 0 and d["verdict"] == "cpu_only" and d["ctx"] == 43_008 and d["ctx"] % 256 == 0
    assert (d["ctx_reason"], d["ctx_ceiling"], d["ctx_cap"], d["max_ctx"]) == ("shrunk", 131_072, None, 43_008)
    assert d["tok_s_estimate"]["bytes_per_token"]["vram"] == 0 and d["tok_s_estimate"]["tok_s"] > 0
    code, trained = run_json(capsys, "fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--no-measure",
                             "--ctx", "131072")
    assert code == 3 and trained["verdict"] == "does_not_fit" and trained["tok_s_estimate"] is None
    assert trained["command"] is None and trained["max_ctx"] == 43_008
    _, over = run_json(capsys, "fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--no-measure",
                       "--ctx", str(d["ctx"] + 256))
    assert over["verdict"] == "does_not_fit"


def test_fit_ctx_cap_lowers_the_automatic_ctx_and_bounds_the_search(capsys):
    code, d = run_json(capsys, "fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--no-measure",
                       "--ctx-cap", "8192")
    assert code == 0 and (d["ctx"], d["ctx_cap"], d["ctx_reason"], d["max_ctx"]) == (8192, 8192, "ceiling", 8192)
    code, d = run_json(capsys, "fit", LLAMA8B, "--host-available", "64G", "--no-gpu", "--no-measure",
                       "--ctx-cap", "1000000")
    assert code == 0 and d["ctx"] == d["ctx_ceiling"] == 131_072  # a cap never raises it past the trained context


def test_fit_text_names_the_ctx_and_why(capsys):
    main(["fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--no-measure"])
    out = " ".join(capsys.readouterr().out.split())  # wraps at 100 columns; the host holds its compute buffer too
    assert "fits CPU-only — everything in host RAM (slowest) at ctx 43,008 (the trained 131,072 does not fit)" in out
    assert "Largest ctx that fits 43,008 tokens with 0 GPU layers" in out


def test_max_ctx_is_the_linear_scans_answer(model):
    spec = model(SMALL)
    machine = hypothetical_machine(6 * GiB + 100 * MiB, gpu_count=1, gpu_total=3 * GiB // 2 + 60 * MiB)
    answers = set()
    for g in (0, 4, 9):
        request = FitRequest(gpu_layers=g)
        candidates = [*range(256, 16384, 256), 16384]
        fitting = [c for c in candidates
                   if estimate_fit(spec, machine, FitRequest(ctx=c, gpu_layers=g)).verdict.admitted]
        answer = largest_fitting_ctx(spec, machine, request, g, 16384)
        assert answer == (max(fitting) if fitting else None)
        answers.add(answer)
    assert len(answers) == 3 and None not in answers and 16384 not in answers  # the host, the GPU, then the GPU again


def test_sweep_json_and_csv_carry_tok_s_and_streamed_bytes(capsys, tmp_path):
    csv_path = tmp_path / "s.csv"
    code, d = run_json(capsys, "sweep", LLAMA8B, "--budgets", "1G:7G:1G", "--no-measure", "--csv", str(csv_path))
    assert code == 0
    rows = d["rows"]
    assert all({"tok_s", "stream_bytes_per_token", "ring_planned"} <= set(r) for r in rows)
    feasible = [r for r in rows if r["feasible"]]
    assert all(r["tok_s"] > 0 for r in feasible)
    assert [r["n_pinned"] for r in feasible] == sorted(r["n_pinned"] for r in feasible)
    streaming = [r["tok_s"] for r in feasible if r["stream_bytes_per_token"]]
    assert streaming == sorted(streaming) and len(streaming) >= 2  # pinned count and decode climb together
    assert "tok_s,stream_bytes_per_token" in csv_path.read_text().splitlines()[0]
    main(["sweep", LLAMA8B, "--budgets", "1G:7G:1G", "--no-measure"])
    text = capsys.readouterr().out
    assert "tok/s≈" in text and "* where it is not the 2 requested" in text
    assert "tok/s≈: the decode estimate at the start of a conversation" in text
    assert all(line.split()[-1] not in ("—", "None") for line in text.splitlines()[1:8])


def test_the_sweep_prints_the_ring_it_planned(capsys):
    main(["sweep", LLAMA8B, "--budgets", "4G:6G:2G", "--no-measure"])
    lines = capsys.readouterr().out.splitlines()
    assert "   1*  " in lines[1] and "   0*  " in lines[2]
    assert load_model(LLAMA8B).n_layer == 32


def test_two_plans_in_a_row_print_the_same_estimate_from_figures_measured_once(capsys, private_data_dir):
    args = ["plan", LLAMA8B, "--budget", "4G", "--host-available", "8G"]
    _, first = run_json(capsys, *args)
    record = private_data_dir / "machine-speed.json"
    kept = record.stat().st_mtime_ns
    _, second = run_json(capsys, *args)
    assert first["tok_s_estimate"] == second["tok_s_estimate"] and record.stat().st_mtime_ns == kept
    ram = first["tok_s_estimate"]["bandwidths"]["ram"]
    assert ram["source"] == "measured" and ram["date"] and "-thread read of" in ram["detail"]


def test_hw_json_names_the_bandwidth_its_date_and_source_and_measures_again_when_asked(capsys):
    code, d = run_json(capsys, "hw")
    ram = d["speed"]["ram_bandwidth"]
    assert code == 0 and ram["source"] == "measured" and ram["bytes_per_s"] > 10**8
    assert ram["date"] == time.strftime("%Y-%m-%d", time.gmtime(ram["measured_at"]))
    assert d["speed"]["compute"]["source"] == "measured" and d["speed"]["record"].endswith("machine-speed.json")
    assert run_json(capsys, "hw")[1]["speed"] == d["speed"]  # kept
    again = run_json(capsys, "hw", "--measure")[1]["speed"]["ram_bandwidth"]
    listed = run_json(capsys, "hw", "--calibration")[1]["measurements"]
    assert [m["tier"] for m in listed] == ["ram", "ram", "compute", "compute"]  # added, the best quiet one used
    assert again["bytes_per_s"] in [m["rate"] for m in listed if m["used"]]
    main(["hw"])
    assert "RAM bandwidth" in capsys.readouterr().out


@pytest.mark.parametrize(("preset", "tier", "cited"), [("RTX 4090", "vram", 1008 * 10**9),
                                                       ("M4 Max 128GB", "ram", 546 * 10**9)])
def test_a_presets_cited_bandwidth_prices_its_full_load(capsys, preset, tier, cited):
    code, d = run_json(capsys, "fit", LLAMA8B, "--preset", preset, "--ctx", "8192", "--no-measure")
    figure = d["tok_s_estimate"]["bandwidths"][tier]
    assert code == 0 and figure["bytes_per_s"] == cited and figure["source"] == "cited"
    _, typed = run_json(capsys, "fit", LLAMA8B, "--preset", preset, "--ctx", "8192", "--no-measure",
                        f"--{tier}-bw", "100G")
    assert typed["tok_s_estimate"]["bandwidths"][tier]["source"] == "typed"


@pytest.mark.parametrize("command", [["plan", LLAMA8B, "--budget", "6G"],
                                     ["fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--ctx", "8192"],
                                     ["quants", LLAMA8B, "--host-available", "64G", "--no-gpu"]])
def test_prompt_tokens_sets_the_prompt_whose_first_token_is_estimated(capsys, command):
    def ttft(d):
        return d["ttft_s_estimate"] if "rows" not in d else next(r for r in d["rows"] if r["best_fit"])["ttft_s_estimate"]

    _, short = run_json(capsys, *command, "--no-measure")
    _, long = run_json(capsys, *command, "--no-measure", "--prompt-tokens", "8000")
    assert ttft(long) > 8 * ttft(short) > 0  # attention grows with the prompt too
    with pytest.raises(SystemExit) as info:
        main([*command, "--prompt-tokens", "0"])
    assert info.value.code == 2 and "prompt length" in capsys.readouterr().err


def test_fit_json_has_the_prefill_keys_and_text_the_first_token(capsys):
    args = ["fit", LLAMA8B, "--host-available", "16G", "--no-gpu", "--ctx", "8192", "--no-measure"]
    _, d = run_json(capsys, *args)
    assert d["prompt_tokens"] == 1000 and d["ttft_s_estimate"] > 0 and d["prefill_tok_s_estimate"] > 0
    main(args)
    out = capsys.readouterr().out
    assert "first token after ≈ " in out and "decode ≈ " in out and "at a full 8,192-token context" in out
    _, gpu = run_json(capsys, "fit", LLAMA8B, "--preset", "RTX 4090", "--ctx", "8192", "--no-measure")
    assert gpu["ttft_s_estimate"] > 0 and gpu["tok_s_estimate"]["gpu"]["backend"] == "CUDA"  # the preset's FP16 rate
    _, unknown = run_json(capsys, "fit", LLAMA8B, "--gpu-free", "24G", "--ctx", "8192", "--no-measure")
    assert unknown["ttft_s_estimate"] is None and unknown["tok_s_estimate"]["prefill"] is None  # no GPU compute rate
    _, typed = run_json(capsys, "fit", LLAMA8B, "--gpu-free", "24G", "--ctx", "8192", "--no-measure",
                        "--gpu-tflops", "330.3", "--backend", "cuda", "--vram-bw", "1008G")
    assert typed["ttft_s_estimate"] > 0 and typed["tok_s_estimate"]["gpu"]["compute"]["source"] == "typed"
