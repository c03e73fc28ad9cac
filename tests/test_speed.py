"""What a token reads, tier by tier, what a prompt costs, and the calibrated estimates they give.

Shared arithmetic (see test_planner_ledger.py): one Q8_0 llama block of the 4-layer model is
39680 bytes; its 2048-row output table 64·2048/32·34 = 139264 bytes (68 per row); the final
norm 64·4 = 256; an f16 KV row per token per layer 128 bytes, so 4 layers · 128 = 512 per token.
The MoE block (4 experts, 2 used, expert ff 32): attention 13056 + router 1024 + norms 512 +
routed experts 3 · 64·32·4/32·34 = 26112 = 40704 bytes, of which a token reads
40704 − 26112 + 26112 · 2/4 = 27648.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, MLADesc, write_gguf
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_planner_properties import arch_descs, budgets_around, requests

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, FitRequest, estimate_fit, hypothetical_machine, load_model, plan_memory
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.speed.backend_speed import BACKEND_SPEED
from gguf_budget.core.machine.bandwidth import (
    Bandwidth, Bandwidths, BandwidthSource, Calibration, ComputeRate, page_cache_bandwidth,
)
from gguf_budget.core.model.kv import kv_price
from gguf_budget.core.plan.types import CtxPolicy
from gguf_budget.core.speed.kernel_speed import type_speed
from gguf_budget.core.speed.estimate import StreamSource, fit_speed, plan_speed, stream_source
from gguf_budget.core.speed.token_bytes import TokenBytes, TokenPrices, layer_read_bytes, moe_fraction
from gguf_budget.core.views.speed_view import decode_text, prefill_text, speed_dict, speed_text

LAYER, HEAD, NORM, ROW, KV_PER_TOKEN = 39680, 139264, 256, 68, 512
GiB = 1 << 30
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
MOE = ArchDesc(n_layer=2, n_expert=4, n_expert_used=2, expert_ff=32)


def bw(n: int) -> Bandwidth:
    return Bandwidth(n, BandwidthSource.TYPED, "test")


CALIBRATION = Calibration(0.5, 0.25, runs=3)
COMPUTE = ComputeRate(10**6, BandwidthSource.TYPED, "test")
BANDWIDTHS = Bandwidths(ram=bw(1000), disk=bw(100), vram=bw(10_000), compute=COMPUTE, calibration=CALIBRATION)


def test_routed_experts_are_read_at_used_over_count(model):
    spec = model(MOE)
    assert spec.layer_bytes == (40704, 40704)
    assert layer_read_bytes(spec) == (27648, 27648)
    assert "2/4 per token" in moe_fraction(spec).text
    assert layer_read_bytes(model(UNTIED)) == (LAYER,) * 4 and moe_fraction(model(UNTIED)) is None


@pytest.mark.parametrize(("pinned", "stream_head", "expected"), [
    # all pinned, head resident: everything from RAM (kv = 1000 bytes here)
    (4, False, TokenBytes(ram=4 * LAYER + HEAD + NORM + ROW + 1000, stream=0, vram=0)),
    # one pinned, head streamed: three layers and the whole head table stream
    (1, True, TokenBytes(ram=LAYER + NORM + ROW + 1000, stream=3 * LAYER + HEAD, vram=0)),
    (0, False, TokenBytes(ram=HEAD + NORM + ROW + 1000, stream=4 * LAYER, vram=0)),
])
def test_budget_plan_tiers_by_hand(model, pinned, stream_head, expected):
    prices = TokenPrices.of(model(UNTIED))
    got = prices.budget_plan(pinned, stream_head, kv=1000)
    assert got == expected
    assert got.total == prices.read_per_token(1000) == 4 * LAYER + HEAD + NORM + ROW + 1000


@pytest.mark.parametrize(("streamed", "available", "peak", "source"), [
    (0, None, 10, StreamSource.NONE),
    (100, None, 10, StreamSource.DISK),  # no machine known: disk
    (100, 110, 10, StreamSource.PAGE_CACHE),  # 110 − 10 = 100 beside the peak holds all 100
    (100, 109, 10, StreamSource.DISK),
])
def test_stream_from_the_page_cache_only_when_the_ram_beside_the_peak_holds_it_all(streamed, available, peak, source):
    assert stream_source(streamed, available, peak) is source


def test_plan_speed_is_the_calibration_over_the_sum_of_bytes_over_bandwidth(model):
    spec = model(UNTIED)
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(24 * 1024 * 1024 + 300_000), ctx=128))
    assert 0 < plan.n_pinned < 4 or plan.stream_lm_head
    prices = TokenPrices.of(spec)
    speed = plan_speed(prices, plan, BANDWIDTHS, None)
    start = prices.budget_plan(plan.n_pinned, plan.stream_lm_head, 0)
    full = prices.budget_plan(plan.n_pinned, plan.stream_lm_head, plan.ledger.kv)
    assert (speed.start, speed.full, speed.ctx) == (start, full, 128) and speed.stream_from is StreamSource.DISK
    assert full.ram - start.ram == plan.ledger.kv == 128 * KV_PER_TOKEN and full.stream == start.stream
    assert speed.tok_s == pytest.approx(0.5 / (start.ram / 1000 + start.stream / 100))
    assert speed.tok_s_full == pytest.approx(0.5 / (full.ram / 1000 + full.stream / 100))
    assert speed.tok_s_full < speed.tok_s
    cached = plan_speed(prices, plan, BANDWIDTHS, plan.total + prices.streamed_file_bytes(plan.n_pinned,
                                                                                         plan.stream_lm_head))
    assert cached.stream_from is StreamSource.PAGE_CACHE and cached.stream.bytes_per_s == 500
    assert cached.tok_s > speed.tok_s


def test_prefill_is_the_prompts_flops_over_the_calibrated_compute_rate(model):
    spec = model(UNTIED)
    prices = TokenPrices.of(spec)
    # llama block: q, k, v, o (64·64, 64·32, 64·32, 64·64) + gate, up, down (3 · 64·128) + two norms of 64
    block = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128 + 2 * 64
    assert prices.block_weights == 4 * block and prices.head_weights == 64 * 2048
    # attention: 4 heads × (16 + 16) dims × 2 FLOPs per cached token, 4 layers; token p attends to p tokens
    per_cached = 4 * 2 * 4 * 32
    assert prices.prompt_flops(10) == 2 * 10 * 4 * block + 2 * 64 * 2048 + per_cached * 55
    plan = plan_memory(spec, BudgetRequest(budget=Budget.unlimited()))
    speed = plan_speed(prices, plan, BANDWIDTHS, None, prompt_tokens=10)
    p = speed.prefill
    assert p.flops == prices.prompt_flops(10)
    assert p.compute_seconds == pytest.approx(prices.prompt_work(10) / (10**6 * 0.25))
    assert p.read_seconds == pytest.approx(1 / speed.tok_s)  # one ubatch: the weights read once
    assert p.ttft_s == max(p.compute_seconds, p.read_seconds) and p.tok_s == pytest.approx(10 / p.ttft_s)
    longer = plan_speed(prices, plan, BANDWIDTHS, None, prompt_tokens=1000).prefill
    assert longer.ttft_s > p.ttft_s and prefill_text(speed).startswith("first token after ≈ ")


def test_a_prompts_work_weighs_each_weight_type_by_its_kernel_speed(model):
    """core.speed.kernel_speed Rule 1: the same FLOPs over Q8_0 blocks, F32 norms, a Q8_0 head and F16 attention."""
    prices = TokenPrices.of(model(UNTIED))
    block_q8, norms = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128, 2 * 64
    per_cached = 4 * 2 * 4 * 32
    assert type_speed(T.Q8_0) == 1.0
    assert prices.prompt_work(10) == pytest.approx(
        2 * 10 * 4 * (block_q8 + norms / type_speed(T.F32)) + 2 * 64 * 2048 + per_cached * 55 / type_speed(T.F16))


def test_a_slow_kernel_type_prefills_slower_than_a_fast_one_of_the_same_flops(model):
    """A Q4_1 SmolLM2 prefilled at 398 tok/s where Q4_K_M models of the same FLOPs ran twice as fast."""
    shape = ArchDesc(n_layer=4, n_embd=256, n_ff=512, n_vocab=2048)
    slow, fast = (TokenPrices.of(model(replace(shape, weight_type=t))) for t in (T.Q4_1, T.Q4_K))
    assert slow.prompt_flops(500) == fast.prompt_flops(500)
    assert type_speed(T.Q4_1) < type_speed(T.Q4_K) and slow.prompt_work(500) > fast.prompt_work(500)


def test_sliding_window_layers_attend_to_their_window_only(model):
    spec = model(ArchDesc(arch="gemma2", n_layer=2, sliding_window=4))  # gemma2: every other layer slides
    prices = TokenPrices.of(spec)
    windowed, full = dict(prices.attention)[4], dict(prices.attention)[None]
    assert windowed == full
    n = 10  # the windowed layer sees 1+2+3+4 then 4 per token: 10 + 6·4 = 34; the full one 55
    assert prices.prompt_flops(n) - prices.prompt_flops(0) - 2 * n * prices.block_weights - 2 * prices.head_weights \
        == windowed * 34 + full * 55


def test_refused_and_unlimited_plans(model):
    spec = model(UNTIED)
    prices = TokenPrices.of(spec)
    assert plan_speed(prices, plan_memory(spec, BudgetRequest(budget=Budget.of(1000))), BANDWIDTHS, None) is None
    forced = plan_speed(prices, plan_memory(spec, BudgetRequest(budget=Budget.of(1000), force=True)), BANDWIDTHS, None)
    assert forced is not None and forced.bytes.stream == 4 * LAYER + HEAD
    unlimited = plan_speed(prices, plan_memory(spec, BudgetRequest(budget=Budget.unlimited())), BANDWIDTHS, None)
    assert unlimited.bytes.stream == 0 and unlimited.stream is None and unlimited.stream_from is StreamSource.NONE
    assert unlimited.start.ram == 4 * LAYER + HEAD + NORM + ROW
    assert unlimited.full.ram == 4 * LAYER + HEAD + NORM + ROW + 2048 * KV_PER_TOKEN


def test_full_load_on_a_gpu_reads_the_offloaded_slots_from_vram(model):
    spec = model(UNTIED)
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    fit = estimate_fit(spec, machine, FitRequest(ctx=2048))
    assert fit.gpu_layers == 5 and fit.output_on_gpu
    speed = fit_speed(TokenPrices.of(spec), fit, BANDWIDTHS)
    assert speed.start == TokenBytes(ram=ROW, stream=0, vram=4 * LAYER + HEAD + NORM)
    assert speed.full == TokenBytes(ram=ROW, stream=0, vram=4 * LAYER + HEAD + NORM + 2048 * KV_PER_TOKEN)
    # the host's row at the machine's calibration (no fixed time: 0 here), the VRAM at the GPU backend's line
    gpu = speed.gpu.speed  # a GPU of unknown make runs Vulkan
    assert gpu == BACKEND_SPEED[Backend.VULKAN]
    vram = speed.start.vram
    assert speed.tok_s == pytest.approx(1 / (ROW / 1000 / 0.5 + vram / (10_000 * gpu.decode)
                                             + gpu.decode_fixed_s * vram / speed.start.total))
    assert speed.prefill is None  # no GPU compute rate is known
    split = fit_speed(TokenPrices.of(spec), estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=2)),
                      BANDWIDTHS)
    # -ngl 2: the output layer first, then the last block (llama.cpp 0c1e570)
    assert split.full.vram == LAYER + HEAD + NORM + 2048 * 128 and split.full.ram == 3 * LAYER + ROW + 3 * 2048 * 128
    assert split.start.vram == LAYER + HEAD + NORM and split.start.ram == 3 * LAYER + ROW
    at_100 = fit_speed(TokenPrices.of(spec), fit, BANDWIDTHS, start_tokens=100)
    assert at_100.start.vram == speed.start.vram + 100 * KV_PER_TOKEN and at_100.full == speed.full
    too_small = hypothetical_machine(1 << 20)
    assert fit_speed(TokenPrices.of(spec), estimate_fit(spec, too_small, FitRequest(ctx=2048)), BANDWIDTHS) is None


def test_texts_say_it_is_a_calibrated_estimate_at_both_ends_of_a_conversation(model):
    spec = model(UNTIED)
    speed = plan_speed(TokenPrices.of(spec), plan_memory(spec, BudgetRequest(budget=Budget.unlimited())), BANDWIDTHS, None)
    text = decode_text(speed)
    assert text.startswith("decode ≈ ") and " at the start, ≈ " in text and "at a full 2,048-token context" in text
    assert text.endswith("(estimate, calibrated on 3 runs on this machine)") and "≤" not in text
    block = speed_text("Speed estimate", speed, "")
    assert "(typed: test)" in block and "exact bytes" in block and "first token after ≈ " in block
    d = speed_dict(speed)
    assert d["measured"] is False and d["kind"] == "estimate" and d["bandwidths"]["ram"] == {
        "bytes_per_s": 1000, "source": "typed", "detail": "test", "measured_at": None, "date": None}
    assert d["bytes_per_token"]["total"] == speed.start.total and d["tok_s"] == speed.tok_s
    assert d["bytes_per_token_full_context"]["total"] == speed.full.total and d["tok_s_full_context"] == speed.tok_s_full
    assert d["calibration"] == {"decode_efficiency": 0.5, "prefill_efficiency": 0.25, "runs": 3,
                                "text": "calibrated on 3 runs on this machine"}
    assert d["prefill"]["prompt_tokens"] == 1000 and d["prefill"]["ttft_s"] == speed.prefill.ttft_s


def test_page_cache_reads_at_half_the_ram_figure():
    assert page_cache_bandwidth(bw(1001)).bytes_per_s == 500
    assert page_cache_bandwidth(bw(1)).bytes_per_s == 1


# ---- properties over random real files ----

@pytest.fixture(scope="module")
def write(tmp_path_factory):
    folder = tmp_path_factory.mktemp("speed-models")
    counter = itertools.count()

    def make(desc: ArchDesc):
        return load_model(write_gguf(folder / f"m{next(counter)}.gguf", desc, "header_only")[0])

    return make


def read_reference(spec, kv: int) -> int:
    """What one token reads, from the tensor directory: every block (routed experts at used/count, per block,
    rounded down), the head table, every global but the embedding and output tables, one embedding row, the KV."""
    blocks, experts = [0] * spec.n_layer, [0] * spec.n_layer
    globals_: dict[str, int] = {}
    for t in spec.tensors:
        if t.layer is None:
            globals_[t.name.split(".")[0]] = globals_.get(t.name.split(".")[0], 0) + t.nbytes
        else:
            blocks[t.layer] += t.nbytes
            experts[t.layer] += t.nbytes if "_exps" in t.name else 0
    used, count = spec.expert_used_count, spec.expert_count
    if used and count and any(experts):
        blocks = [b - e + e * used // count for b, e in zip(blocks, experts, strict=True)]
    head = globals_.get("output", globals_["token_embd"])
    rest = sum(n for name, n in globals_.items() if name not in ("token_embd", "output"))
    return sum(blocks) + head + rest + globals_["token_embd"] // spec.n_vocab + kv


@settings(max_examples=80, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_bytes_per_token_over_all_tiers_is_what_a_token_reads(write, data, desc):
    spec = write(desc)
    request = data.draw(requests(spec))
    budget = data.draw(budgets_around(spec, request))
    plan = plan_memory(spec, replace(request, budget=Budget.of(budget)))
    speed = plan_speed(TokenPrices.of(spec), plan, BANDWIDTHS, data.draw(st.none() | st.integers(0, 2**40)))
    if plan.impossible:
        assert speed is None
        return
    fixed = kv_price(spec, plan.kv_type).at(0)  # recurrent states: read from the first token
    assert speed.bytes.vram == 0
    assert speed.start.ram + speed.start.stream == read_reference(spec, fixed)
    assert speed.full.ram + speed.full.stream == read_reference(spec, plan.ledger.kv)
    machine = hypothetical_machine(data.draw(st.integers(1, 2**34)), gpu_count=data.draw(st.integers(0, 2)),
                                   gpu_total=data.draw(st.integers(1, 2**32)))
    fit = estimate_fit(spec, machine, FitRequest(ctx=plan.ctx, kv_type=request.kv_type))
    full = fit_speed(TokenPrices.of(spec), fit, BANDWIDTHS)
    if full is not None:
        assert full.start.stream == full.full.stream == 0
        assert full.start.total == read_reference(spec, fixed)
        assert full.full.total == read_reference(spec, kv_price(spec, request.kv_type).at(plan.ctx))


@settings(max_examples=120, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_more_budget_never_reads_as_slower_at_the_start_of_a_conversation(write, data, desc):
    """The same model and machine (any free RAM, or none known), any knobs and either ctx policy, and the same
    context (explicit, or chosen alike at both budgets): the decode estimate at the start of a conversation never
    falls as the budget grows — the KV a bigger context reserves is not read at the start. (Below the cap the
    planner may spend more budget on context rather than a pinned layer: the next test states that case.)"""
    spec = write(desc)
    request = replace(data.draw(requests(spec)), force=False,
                      prefer=data.draw(st.sampled_from(tuple(CtxPolicy))))
    low, high = sorted(data.draw(st.lists(budgets_around(spec, request), min_size=2, max_size=2)))
    prices = TokenPrices.of(spec)
    plans = [plan_memory(spec, replace(request, budget=Budget.of(b))) for b in (low, high)]
    assume(plans[0].impossible or plans[0].ctx == plans[1].ctx)
    # free RAM anywhere, none known, or right where the smaller budget's stream just fits in the page cache
    edge = plans[0].total + prices.streamed_file_bytes(plans[0].n_pinned, plans[0].stream_lm_head)
    available = data.draw(st.none() | st.integers(0, 2**40) | st.integers(max(edge - 2, 0), edge + 2))
    ram = data.draw(st.integers(1, 10**12))
    bandwidths = replace(BANDWIDTHS, ram=bw(ram), disk=bw(data.draw(st.integers(1, ram))))
    speeds = [plan_speed(prices, p, bandwidths, available) for p in plans]
    if speeds[0] is not None:
        assert speeds[1] is not None and speeds[1].tok_s >= speeds[0].tok_s


def test_below_the_cap_the_planner_may_buy_context_with_a_pinned_layer_and_the_start_reads_it(model):
    """Stated, not hidden: auto ctx ranks a longer context before a pinned layer up to the cap (the trained 2,401
    tokens here, under speed first's 4,096), so 504 bytes more budget buy ctx 2,401 instead of 2,304 and give up
    the one pinned layer — and the start of a conversation then streams that layer, so it is slower."""
    spec = model(ArchDesc(arch="deepseek2", n_layer=3, n_embd=128, n_ff=32, n_head=2, n_head_kv=1, n_vocab=2529,
                          context_length=2401, tied=True, embd_type=T.Q4_0,
                          mla=MLADesc(kv_lora_rank=32, q_lora_rank=0, rope_dim=8, key_length=96, value_length=64)))
    low, high = (plan_memory(spec, BudgetRequest(budget=Budget.of(b), n_buffers=1)) for b in (28_991_411, 28_991_915))
    assert (low.ctx, low.n_pinned, high.ctx, high.n_pinned) == (2304, 1, 2401, 0)
    prices = TokenPrices.of(spec)
    assert plan_speed(prices, high, BANDWIDTHS, None).tok_s < plan_speed(prices, low, BANDWIDTHS, None).tok_s


def test_a_pinned_layer_moves_its_bytes_from_the_stream_to_the_peak_so_the_page_cache_holds(model):
    """The page cache is judged beside the plan's peak, not its budget: RAM that holds one plan's peak and stream
    holds every plan's at a larger budget, so more budget never sends the stream to disk."""
    spec = model(UNTIED)
    request = BudgetRequest(ctx=128, head_mode="stream")
    plan = plan_memory(spec, replace(request, budget=Budget.of(24 * 1024 * 1024 + 300_000)))
    prices = TokenPrices.of(spec)
    assert plan.feasible and plan.n_pinned < 4
    available = plan.total + prices.streamed_file_bytes(plan.n_pinned, plan.stream_lm_head)
    assert plan_speed(prices, plan, BANDWIDTHS, available).stream_from is StreamSource.PAGE_CACHE
    assert plan_speed(prices, plan, BANDWIDTHS, available - 1).stream_from is StreamSource.DISK
    sources = set()
    for extra in range(0, 5 * LAYER, LAYER // 4):
        bigger = plan_memory(spec, replace(request, budget=Budget.of(plan.budget.limit + extra)))
        sources.add(plan_speed(prices, bigger, BANDWIDTHS, available).stream_from)
    assert sources == {StreamSource.PAGE_CACHE}  # never disk (the head streams at every budget here)
