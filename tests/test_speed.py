"""What a token reads, tier by tier, and the decode bound it gives.

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
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st
from test_planner_properties import arch_descs, budgets_around, requests

from gguf_budget.core import BudgetRequest, FitRequest, estimate_fit, hypothetical_machine, load_model, plan_memory
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource, page_cache_bandwidth
from gguf_budget.core.speed.estimate import StreamSource, fit_speed, plan_speed, stream_source
from gguf_budget.core.speed.token_bytes import TokenBytes, TokenPrices, layer_read_bytes, moe_fraction
from gguf_budget.core.views.speed_view import decode_text, speed_dict, speed_text

LAYER, HEAD, NORM, ROW, KV_PER_TOKEN = 39680, 139264, 256, 68, 512
GiB = 1 << 30
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
MOE = ArchDesc(n_layer=2, n_expert=4, n_expert_used=2, expert_ff=32)


def bw(n: int) -> Bandwidth:
    return Bandwidth(n, BandwidthSource.TYPED, "test")


BANDWIDTHS = Bandwidths(ram=bw(1000), disk=bw(100), vram=bw(10_000))


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


@pytest.mark.parametrize(("streamed", "available", "budget", "source"), [
    (0, None, 10, StreamSource.NONE),
    (100, None, 10, StreamSource.DISK),  # no machine known: disk
    (100, 110, 10, StreamSource.PAGE_CACHE),  # 110 − 10 = 100 spare holds all 100
    (100, 109, 10, StreamSource.DISK),
])
def test_stream_from_the_page_cache_only_when_spare_ram_holds_it_all(streamed, available, budget, source):
    assert stream_source(streamed, available, budget) is source


def test_plan_speed_is_one_over_the_sum_of_bytes_over_bandwidth(model):
    spec = model(UNTIED)
    plan = plan_memory(spec, BudgetRequest(24 * 1024 * 1024 + 300_000, ctx=128))
    assert 0 < plan.n_pinned < 4 or plan.stream_lm_head
    speed = plan_speed(TokenPrices.of(spec), plan, BANDWIDTHS, None)
    read = TokenPrices.of(spec).budget_plan(plan.n_pinned, plan.stream_lm_head, plan.ledger.kv)
    assert speed.bytes == read and speed.stream_from is StreamSource.DISK
    assert speed.seconds_per_token == read.ram / 1000 + read.stream / 100
    assert speed.tok_s == 1 / speed.seconds_per_token
    cached = plan_speed(TokenPrices.of(spec), plan, BANDWIDTHS, 10 * GiB)
    assert cached.stream_from is StreamSource.PAGE_CACHE and cached.stream.bytes_per_s == 500
    assert cached.tok_s > speed.tok_s


def test_refused_and_unlimited_plans(model):
    spec = model(UNTIED)
    prices = TokenPrices.of(spec)
    assert plan_speed(prices, plan_memory(spec, BudgetRequest(1000)), BANDWIDTHS, None) is None
    forced = plan_speed(prices, plan_memory(spec, BudgetRequest(1000, force=True)), BANDWIDTHS, None)
    assert forced is not None and forced.bytes.stream == 4 * LAYER + HEAD
    unlimited = plan_speed(prices, plan_memory(spec, BudgetRequest(0)), BANDWIDTHS, None)
    assert unlimited.bytes.stream == 0 and unlimited.stream is None and unlimited.stream_from is StreamSource.NONE
    assert unlimited.bytes.ram == 4 * LAYER + HEAD + NORM + ROW + 2048 * KV_PER_TOKEN


def test_full_load_on_a_gpu_reads_the_offloaded_slots_from_vram(model):
    spec = model(UNTIED)
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    fit = estimate_fit(spec, machine, FitRequest(ctx=2048))
    assert fit.gpu_layers == 5 and fit.output_on_gpu
    speed = fit_speed(TokenPrices.of(spec), fit, BANDWIDTHS)
    assert speed.bytes == TokenBytes(ram=ROW + fit.kv.host, stream=0, vram=4 * LAYER + HEAD + NORM + fit.kv.gpu)
    assert speed.bytes.total == TokenPrices.of(spec).read_per_token(fit.kv.engine)
    assert speed.seconds_per_token == speed.bytes.ram / 1000 + speed.bytes.vram / 10_000
    split = fit_speed(TokenPrices.of(spec), estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=2)),
                      BANDWIDTHS)
    # -ngl 2: the output layer first, then the last block (llama.cpp 0c1e570)
    assert split.bytes.vram == LAYER + HEAD + NORM + 2048 * 128 and split.bytes.ram == 3 * LAYER + ROW + 3 * 2048 * 128
    too_small = hypothetical_machine(1 << 20)
    assert fit_speed(TokenPrices.of(spec), estimate_fit(spec, too_small, FitRequest(ctx=2048)), BANDWIDTHS) is None


def test_texts_say_it_is_an_estimate(model):
    spec = model(UNTIED)
    speed = plan_speed(TokenPrices.of(spec), plan_memory(spec, BudgetRequest(0)), BANDWIDTHS, None)
    assert decode_text(speed).endswith("tok/s (memory-bandwidth bound, not measured)")
    assert decode_text(speed).startswith("decode ≤ ~")
    block = speed_text("Decode estimate", speed, "")
    assert "(typed: test)" in block and "exact bytes" in block
    d = speed_dict(speed)
    assert d["measured"] is False and d["bandwidths"]["ram"] == {"bytes_per_s": 1000, "source": "typed",
                                                                    "detail": "test", "measured_at": None, "date": None}
    assert d["bytes_per_token"]["total"] == speed.bytes.total and d["tok_s"] == speed.tok_s


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
    plan = plan_memory(spec, replace(request, budget_bytes=budget))
    speed = plan_speed(TokenPrices.of(spec), plan, BANDWIDTHS, data.draw(st.none() | st.integers(0, 2**40)))
    if plan.impossible:
        assert speed is None
        return
    assert speed.bytes.vram == 0
    assert speed.bytes.ram + speed.bytes.stream == read_reference(spec, plan.ledger.kv)
    machine = hypothetical_machine(data.draw(st.integers(1, 2**34)), gpu_count=data.draw(st.integers(0, 2)),
                                   gpu_total=data.draw(st.integers(1, 2**32)))
    fit = estimate_fit(spec, machine, FitRequest(ctx=plan.ctx, kv_type=request.kv_type))
    full = fit_speed(TokenPrices.of(spec), fit, BANDWIDTHS)
    if full is not None:
        assert full.bytes.stream == 0
        assert full.bytes.total == read_reference(spec, fit.kv.engine)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_decode_never_slows_when_only_the_budget_grows(write, data, desc):
    """Everything else fixed: the model, an explicit ctx, the knobs, the bandwidths, and where streamed bytes come
    from (no machine: disk; a machine with RAM to spare at every budget: the page cache)."""
    spec = write(desc)
    request = replace(data.draw(requests(spec)), ctx=data.draw(st.integers(1, 4000)), force=False)
    low, high = sorted(data.draw(st.lists(budgets_around(spec, request), min_size=2, max_size=2)))
    available = data.draw(st.sampled_from((None, 2**62)))
    ram = data.draw(st.integers(1, 10**12))
    bandwidths = Bandwidths(ram=bw(ram), disk=bw(data.draw(st.integers(1, ram))))
    speeds = [plan_speed(TokenPrices.of(spec), plan_memory(spec, replace(request, budget_bytes=b)), bandwidths,
                         available) for b in (low, high)]
    if speeds[0] is not None:
        assert speeds[1] is not None and speeds[1].tok_s >= speeds[0].tok_s


def test_the_one_way_a_bigger_budget_decodes_slower_is_the_page_cache_giving_way(model):
    """Stated, not hidden: RAM the budget takes is RAM the page cache no longer has for the streamed layers."""
    spec = model(UNTIED)
    request = BudgetRequest(ctx=128, head_mode="stream")
    plan = plan_memory(spec, replace(request, budget_bytes=24 * 1024 * 1024 + 300_000))
    assert plan.feasible and plan.n_pinned < 4
    streamed = TokenPrices.of(spec).streamed_file_bytes(plan.n_pinned, plan.stream_lm_head)
    available = plan.budget_bytes + streamed
    bigger = plan_memory(spec, replace(request, budget_bytes=plan.budget_bytes + 1))
    assert bigger.n_pinned == plan.n_pinned
    before, after = (plan_speed(TokenPrices.of(spec), p, BANDWIDTHS, available) for p in (plan, bigger))
    assert (before.stream_from, after.stream_from) == (StreamSource.PAGE_CACHE, StreamSource.DISK)
    assert after.tok_s < before.tok_s
