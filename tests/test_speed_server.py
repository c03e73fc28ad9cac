"""Hybrid loads, parallel slots and a draft model: what `estimate` and `server_speed` say a load and a server give.

Real parts: the catalogue's Llama-3.1-8B Q4_K_M header, fitted on a preset machine (RTX 4090) by
`estimate_fit`; the CLI through `main`. Rule numbers are `core.speed.estimate`'s and `server_speed`'s.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.speed.backend_speed import BACKEND_SPEED
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.speed.estimate import experts_on_cpu_speed, fit_speed
from gguf_budget.core.speed.server_speed import DEFAULT_ACCEPTANCE, draft_speedup, slot_speed
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

GiB = 1 << 30
LLAMA8B = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
SPEC = load_model(LLAMA8B)
MACHINE = with_presets("RTX 4090", hypothetical_machine(64 * GiB))


def speed_at(gpu_layers: int | None):
    fit = estimate_fit(SPEC, MACHINE, FitRequest(ctx=4096, gpu_layers=gpu_layers))
    speed = fit_speed(TokenPrices.of(SPEC), fit, Bandwidths())
    assert speed is not None
    return speed


FULL = speed_at(None)


def test_a_full_offload_runs_at_the_backends_line_not_the_cpus_efficiency():
    cuda = BACKEND_SPEED[Backend.CUDA]
    assert FULL.gpu is not None and FULL.gpu.speed == cuda and FULL.start.vram > 0.99 * FULL.start.total
    share = cuda.decode * cuda.decode_speed_of(FULL.gpu.weight_type)  # the model's main type's share (Q4_K: 0.93 of F16)
    gpu = FULL.start.vram / (FULL.vram.bytes_per_s * share) + cuda.decode_fixed_s * FULL.start.vram / FULL.start.total
    assert FULL.gpu_seconds(FULL.start) == pytest.approx(gpu)
    # the CPU's share (0.37 of the bandwidth) on VRAM would put the 4090 near 60 tok/s; llama.cpp does ~130
    assert 110 < FULL.tok_s < 160


def test_a_hybrid_load_adds_the_cpus_time_for_the_layers_it_keeps():
    hybrid = speed_at(24)  # 8 of 32 blocks (and the output layer) on the CPU
    assert hybrid.start.ram > 0.25 * hybrid.start.total
    host = hybrid.memory_seconds(hybrid.start) / hybrid.calibration.decode
    assert hybrid.seconds_at(hybrid.start) == pytest.approx(hybrid.host_seconds(hybrid.start) + hybrid.gpu_seconds(hybrid.start))
    assert hybrid.host_seconds(hybrid.start) >= host > hybrid.gpu_seconds(hybrid.start)  # RAM is the slow tier
    assert hybrid.tok_s < FULL.tok_s / 3  # a quarter of the bytes at RAM speed: several times slower
    assert hybrid.prefill is not None and FULL.prefill is not None and hybrid.prefill.seconds > FULL.prefill.seconds


def test_a_cpu_only_load_keeps_the_cpus_calibrated_line():
    cpu = speed_at(0)  # the quiet-machine CPU table (docs/cpu-speed-runs.md) rests on this line, unchanged
    c = cpu.calibration
    assert cpu.gpu is None and cpu.start.vram == 0 and cpu.gpu_seconds(cpu.start) == 0
    assert cpu.seconds_at(cpu.start) == pytest.approx(cpu.start.total / cpu.ram.bytes_per_s / c.decode + c.decode_overhead_s)


def test_fewer_gpu_layers_never_decode_faster():
    speeds = [speed_at(n).tok_s for n in (0, 8, 16, 24, 32, 33)]
    assert speeds == sorted(speeds)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 256))
def test_more_slots_share_a_step_more_tokens_in_all_fewer_each(slots):
    one, many = slot_speed(FULL, 1), slot_speed(FULL, slots)
    assert one.per_slot_tok_s == pytest.approx(FULL.tok_s) == pytest.approx(one.aggregate_tok_s)
    assert many.per_slot_tok_s <= one.per_slot_tok_s * (1 + 1e-12)
    assert many.aggregate_tok_s >= one.aggregate_tok_s * (1 - 1e-12)
    assert many.aggregate_tok_s == pytest.approx(slots * many.per_slot_tok_s)


def test_four_slots_on_a_4090_give_about_four_times_the_tokens_in_all():
    four = slot_speed(FULL, 4)  # decode is memory-bound: the extra tokens cost their compute only
    assert 3.5 * FULL.tok_s < four.aggregate_tok_s < 4 * FULL.tok_s


@settings(max_examples=40, deadline=None)
@given(st.floats(0, 0.98), st.floats(0, 0.98), st.integers(1, 8))
def test_a_draft_speeds_up_more_the_more_it_gets_accepted(a, b, n):
    draft = FULL.seconds_at(FULL.start) / 10
    low, high = sorted((a, b))
    assert draft_speedup(FULL, draft, low, n).speedup <= draft_speedup(FULL, draft, high, n).speedup + 1e-12


def test_a_draft_nobody_accepts_slows_decode_and_the_default_rate_is_said_as_an_assumption():
    draft = FULL.seconds_at(FULL.start) / 10
    assert draft_speedup(FULL, draft, 0.0).speedup < 1
    default = draft_speedup(FULL, draft)
    assert default.assumed and default.acceptance == DEFAULT_ACCEPTANCE and "assumed acceptance rate of 70%" in default.text
    # 3 drafted at 0.7: 1 + 0.7 + 0.49 + 0.343 = 2.533 tokens a step
    assert default.tokens_per_step == pytest.approx(2.533) and default.speedup > 1.5
    typed = draft_speedup(FULL, draft, 0.5)
    assert not typed.assumed and "an acceptance rate of 50%" in typed.text


def test_fit_prints_the_slots_throughput(capsys):
    args = ["fit", LLAMA8B, "--preset", "RTX 4090", "--ctx", "8192", "--no-measure", "-np", "4"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["server_tok_s_estimate"]
    assert d["slots"]["slots"] == 4 and d["slots"]["aggregate_tok_s"] > 3 * d["slots"]["per_slot_tok_s"] * 0.99
    assert d["draft"] is None and d["kind"] == "estimate"
    main(args)
    assert "4 slots decoding together: ≈ " in capsys.readouterr().out


@pytest.mark.parametrize(("flag", "value", "words"), [("--draft-accept", "1.5", "acceptance rate"),
                                                      ("--backend", "opencl", "no GPU backend"),
                                                      ("--gpu-tflops", "fast", "a GPU FP16 rate"),
                                                      ("--cpu-gflops", "-3", "a CPU compute rate")])
def test_a_bad_speed_flag_is_one_line(capsys, flag, value, words):
    with pytest.raises(SystemExit) as info:
        main(["fit", LLAMA8B, "--preset", "RTX 4090", "--no-measure", flag, value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and words in err and "Traceback" not in err


def test_experts_on_the_cpu_read_their_share_from_ram_and_slow_decode_as_they_grow():
    moe = load_model(str(catalogue_path(find_entry("qwen3-30b-a3b-instruct-2507"))))
    fit = estimate_fit(moe, MACHINE, FitRequest(ctx=4096))
    prices = TokenPrices.of(moe)
    full = fit_speed(prices, fit, Bandwidths())
    speeds = [experts_on_cpu_speed(prices, fit, n, Bandwidths()) for n in (0, 8, 24, moe.n_layer)]
    assert speeds[0].start == full.start and speeds[0].tok_s == pytest.approx(full.tok_s)
    for n, speed in zip((0, 8, 24, moe.n_layer), speeds, strict=True):
        assert speed.start.total == full.start.total  # the same bytes, moved between the tiers
        assert speed.start.ram - full.start.ram == prices.expert_prefix[n]  # the first n blocks' experts, at 8/128
    tok_s = [s.tok_s for s in speeds]
    assert tok_s == sorted(tok_s, reverse=True) and tok_s[-1] < tok_s[0] / 3
    assert experts_on_cpu_speed(TokenPrices.of(SPEC), estimate_fit(SPEC, MACHINE, FitRequest(ctx=4096)), 4,
                                Bandwidths()) is None  # a dense model has no experts to move


def test_fit_with_a_draft_says_its_speed_up_at_the_typed_or_the_assumed_acceptance(capsys, tmp_path):
    text = ArchDesc(n_layer=8, n_embd=512, n_ff=1536, tokens=300, context_length=4096)
    target = write_gguf(tmp_path / "target.gguf", text, "header_only")[0]
    draft = write_gguf(tmp_path / "draft.gguf", replace(text, n_layer=1), "header_only")[0]
    args = ["fit", str(target), "--ctx", "2048", "--preset", "RTX 4090", "--no-measure", "--draft", str(draft)]
    assert main([*args, "--json"]) == 0
    assumed = json.loads(capsys.readouterr().out)["server_tok_s_estimate"]["draft"]
    assert assumed["acceptance"] == DEFAULT_ACCEPTANCE and assumed["acceptance_assumed"] and assumed["draft_max"] == 3
    assert main([*args, "--json", "--draft-accept", "0.2"]) == 0
    typed = json.loads(capsys.readouterr().out)["server_tok_s_estimate"]["draft"]
    assert typed["acceptance"] == 0.2 and not typed["acceptance_assumed"] and typed["speedup"] < assumed["speedup"]
    main(args)
    assert "at an assumed acceptance rate of 70%" in " ".join(capsys.readouterr().out.split())  # wrapped at 100 columns


def test_a_fit_asked_for_experts_on_the_cpu_reads_them_from_ram():
    moe = load_model(str(catalogue_path(find_entry("qwen3-30b-a3b-instruct-2507"))))
    prices = TokenPrices.of(moe)
    plain = fit_speed(prices, estimate_fit(moe, MACHINE, FitRequest(ctx=4096)), Bandwidths())
    asked = fit_speed(prices, estimate_fit(moe, MACHINE, FitRequest(ctx=4096, n_cpu_moe=8)), Bandwidths())
    offload = experts_on_cpu_speed(prices, estimate_fit(moe, MACHINE, FitRequest(ctx=4096)), 8, Bandwidths())
    assert asked.start == offload.start and asked.start.ram - plain.start.ram == prices.expert_prefix[8]
    assert asked.tok_s == pytest.approx(offload.tok_s) and asked.tok_s < plain.tok_s
