"""The Qt-free explorer session: `derive(state)` gives everything the screen shows, the CLI's numbers included."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, hypothetical_machine, plan_memory, plan_text
from gguf_budget.core.explorer import ctx_tiers as ctx_tiers_module
from gguf_budget.core.explorer import derive as derive_module
from gguf_budget.core.explorer.derive import derive, initial_budget
from gguf_budget.core.explorer.headline import BUDGET_PLAN, BannerState
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource
from gguf_budget.core.plan.types import CtxPolicy
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.cli import main

GiB = 1 << 30
TYPED = Bandwidths(ram=Bandwidth(20 * GiB, BandwidthSource.TYPED, "t"), disk=Bandwidth(2 * GiB, BandwidthSource.TYPED, "t"))


def test_70b_at_16_gib_is_feasible_but_slow_and_the_full_load_does_not_fit(llama70b):
    machine = hypothetical_machine(24 * GiB, host_total=32 * GiB)
    view = derive(ExplorerState(model=llama70b, budget=Budget.of(16 * GiB), machine=machine, bandwidths=TYPED))
    speed = view.plan_speed
    assert view.plan.feasible and speed.bytes.stream > 20 * GiB and speed.tok_s < 2
    assert view.headline.state is BannerState.SLOW
    text = view.headline.text
    assert text.startswith(f"{BUDGET_PLAN}: FEASIBLE — SLOW")
    assert f"each token streams {human_bytes(speed.bytes.stream)} from disk" in text
    assert "decode ≈ " in text and "(estimate, default calibration from" in text and "≤" not in text
    assert text.endswith("under the 2 tok/s the banner calls slow")
    assert view.headline.full_load.startswith("Full load (llama.cpp placement on the hypothetical machine): "
                                              "does not fit — host short by")
    assert "largest ctx that fits: none" in view.headline.full_load
    assert "exceeds this machine's usable RAM" not in text  # 16 GiB < 24 − 6 usable


def test_the_slow_threshold_is_a_setting(llama70b):
    state = ExplorerState(model=llama70b, budget=Budget.of(16 * GiB), bandwidths=TYPED)
    tok_s = derive(state).plan_speed.tok_s
    assert derive(replace(state, slow_below_tok_s=tok_s)).headline.state is BannerState.FEASIBLE
    assert derive(replace(state, slow_below_tok_s=tok_s * 1.01)).headline.state is BannerState.SLOW


def test_slow_means_slow_with_every_layer_pinned_too_and_says_it_is_the_bandwidth(llama8b):
    """SLOW is the decode estimate under the threshold, pinned or not; the banner names the reason."""
    state = ExplorerState(model=llama8b, budget=Budget.of(6 * GiB), bandwidths=TYPED)
    view = derive(replace(state, slow_below_tok_s=derive(state).plan_speed.tok_s * 0.99))
    assert view.plan.n_pinned == 32 and view.plan_speed.bytes.stream == 0
    assert view.headline.state is BannerState.FEASIBLE
    slow = derive(replace(state, slow_below_tok_s=view.plan_speed.tok_s * 1.01))
    assert slow.headline.state is BannerState.SLOW
    reads = human_bytes(view.plan_speed.bytes.total)
    assert f"but each token reads {reads} from RAM at 20.00 GiB/s: decode ≈ " in slow.headline.text
    assert "streams" not in slow.headline.text


def test_a_budget_above_usable_ram_is_marked(llama8b):
    machine = hypothetical_machine(10 * GiB)
    view = derive(ExplorerState(model=llama8b, budget=Budget.of(6 * GiB), machine=machine, reserves=Reserves(host=6 * GiB)))
    assert view.usable_ram == 4 * GiB
    assert view.headline.text.endswith("the budget exceeds this machine's usable RAM (4.00 GiB)")


def test_8b_at_6_gib_pins_every_layer_and_says_so(llama8b):
    view = derive(ExplorerState(model=llama8b, budget=Budget.of(6 * GiB), slow_below_tok_s=1))
    assert view.plan.n_pinned == 32 and view.headline.state is BannerState.FEASIBLE
    assert view.pinned_caption.startswith("32 / 32 layers pinned — nothing streams; decode ≈ ")
    assert view.pinned_caption.endswith(" at a full context (estimate)")
    assert view.ctx_label == f"{view.plan.ctx:,} tokens (auto, speed first)"
    assert view.ring_note == "requested 2, planned 0: every layer is pinned, so nothing streams through a ring"
    assert view.full_load is None and "waiting for the machine probe" in view.headline.full_load


def test_an_explicit_ctx_is_planned_exactly_beyond_the_trained_context_too(model):
    spec = model(ArchDesc(n_layer=4, n_vocab=2048, context_length=8192))
    for ctx in (100_000, 1000):
        view = derive(ExplorerState(model=spec, budget=Budget.of(4 * GiB), ctx=ctx))
        assert view.plan.ctx == ctx and view.plan.ctx_explicit
    assert derive(ExplorerState(model=spec, budget=Budget.of(4 * GiB), ctx=100_000)).ctx_label == \
        "100,000 tokens (as asked; beyond the trained 8,192)"


def test_a_file_without_context_length_is_planned_at_the_default_ctx_as_the_cli_plans_it(model, gguf_file, capsys):
    desc = ArchDesc(n_layer=4, n_vocab=2048, omit=("llama.context_length",))
    spec = model(desc)
    assert spec.context_length is None
    view = derive(ExplorerState(model=spec, budget=Budget.of(GiB)))
    path = str(gguf_file(desc, "header_only", name="nolen.gguf"))
    assert main(["plan", path, "--budget", "1G", "--json", "--no-measure"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert view.plan is not None and cli["ctx"] == view.plan.ctx == DEFAULT_CTX == cli["ctx_cap"]
    assert derive(ExplorerState(model=spec, budget=Budget.of(GiB), ctx_cap=3000)).plan.ctx == 3000
    assert derive(ExplorerState(model=spec, budget=Budget.of(GiB), ctx=700)).plan.ctx == 700


def test_prefer_context_and_the_cap_reach_the_planner(llama8b):
    state = ExplorerState(model=llama8b, budget=Budget.of(6 * GiB), prefer=CtxPolicy.CONTEXT)
    assert derive(state).plan.ctx == 40_832
    assert derive(replace(state, ctx_cap=8192)).plan.ctx == 8192


def test_spans_and_the_first_budget(llama8b):
    view = derive(ExplorerState(model=llama8b, budget=Budget.of(6 * GiB)))
    low, high = view.thresholds
    assert view.budget_span.low < low and view.budget_span.high > high
    assert (view.ctx_span.low, view.ctx_span.high, view.ctx_span.step) == (128, 131_072, 128)
    assert view.budget_span.holds(initial_budget(view.thresholds)) and initial_budget(view.thresholds) % (1 << 20) == 0


def test_the_cli_plan_json_is_the_sessions_numbers(llama8b, capsys):
    machine = hypothetical_machine(32 * GiB)
    view = derive(ExplorerState(model=llama8b, budget=Budget.of(4 * GiB), machine=machine, bandwidths=TYPED))
    assert main(["plan", llama8b.path, "--budget", "4G", "--json", "--ram-bw", "20G", "--disk-bw", "2G",
                 "--host-available", "32G"]) == 0
    d = json.loads(capsys.readouterr().out)
    speed = view.plan_speed
    assert (d["ram_bytes_per_token"], d["stream_bytes_per_token"]) == (speed.bytes.ram, speed.bytes.stream)
    assert d["tok_s_estimate"]["tok_s"] == speed.tok_s and d["tok_s_estimate"]["stream_from"] == "page_cache"
    assert d["tok_s_estimate"]["bandwidths"]["ram"]["source"] == "typed"
    assert d["report"] == plan_text(view.plan) and d["bandwidth_notes"] == []


# ---- derive(state, previous) is derive(state) ----

@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(("budget", "ctx", "ctx_cap", "prefer", "n_buffers", "machine",
                                                 "gpu_layers", "kv_type")),
                                st.integers(0, 10**6)), min_size=1, max_size=12))
def test_reusing_the_previous_view_changes_nothing(llama8b, steps):
    values = {
        "budget": lambda n: Budget.unlimited() if n % 5 == 0 else Budget.of((n % 64 + 1) * GiB // 4),
        "ctx": lambda n: None if n % 3 == 0 else n % 200_000 + 1,
        "ctx_cap": lambda n: None if n % 2 == 0 else n % 150_000 + 1,
        "prefer": lambda n: list(CtxPolicy)[n % 2],
        "n_buffers": lambda n: n % 8 + 1,
        "machine": lambda n: None if n % 3 == 0 else hypothetical_machine((n % 64 + 1) * GiB, gpu_count=n % 2,
                                                                            gpu_total=8 * GiB),
        "gpu_layers": lambda n: None if n % 2 == 0 else n % 40,
        "kv_type": lambda n: ("f16", "q8_0", "f32")[n % 3],
    }
    state = ExplorerState(model=llama8b, budget=Budget.of(4 * GiB))
    view = derive(state)
    for field, n in steps:
        state = replace(state, **{field: values[field](n)})
        reused = derive(state, view)
        assert reused == derive(state)
        view = reused


def test_a_budget_tick_reuses_the_full_load(llama8b):
    state = ExplorerState(model=llama8b, budget=Budget.of(2 * GiB), machine=hypothetical_machine(32 * GiB))
    first = derive(state)
    tick = derive(replace(state, budget=Budget.of(2 * GiB + (1 << 20))), first)
    assert tick.full_load is first.full_load and tick.thresholds is first.thresholds
    assert tick.plan != first.plan
    other_model = dataclasses.replace(llama8b)
    assert derive(replace(state, model=other_model), first).full_load is not first.full_load


def test_a_ctx_tick_judges_no_context_tier_again(llama70b, monkeypatch):
    """A 70B on a 24 GiB GPU: each asked ctx holds other GPU layers, so the largest ctx that fits moves on most ticks.
    A tier's figures are its own ctx's (`ctx_tiers` Rule 4): a tick judges its own full load and at most the one new
    largest-ctx tier, never the fixed tiers again (the old code re-judged all seven whenever the largest moved)."""
    state = ExplorerState(model=llama70b, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB))
    view = derive(replace(state, ctx=4096))
    judged = []
    real = derive_module.full_load

    def counted(*args, **kwargs):
        judged.append(args[1].ctx)
        return real(*args, **kwargs)

    monkeypatch.setattr(derive_module, "full_load", counted)
    monkeypatch.setattr(ctx_tiers_module, "full_load", counted)
    moved = 0
    for ctx in (8192, 20480, 40960, 61440, 81920, 102400):
        judged.clear()
        before = view.full_load.max_ctx
        view = derive(replace(state, ctx=ctx), view)
        moved += view.full_load.max_ctx != before
        assert judged in ([ctx], [ctx, view.full_load.max_ctx]), judged
        assert view.tiers == derive(replace(state, ctx=ctx)).tiers
    assert moved >= 4


def test_a_ctx_met_again_is_not_judged_again(llama70b, monkeypatch):
    """Dragging the ctx slider back over values it met (nothing else moved) judges no full load, tier or fix again: the
    view keeps the last KEPT asked ctxs' judgements (`derive` Rule 6), and what it shows is the fresh view's."""
    state = ExplorerState(model=llama70b, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB))
    ctxs = (4096, 12288, 30720, 61440, 98304)
    view = derive(replace(state, ctx=ctxs[0]))
    for ctx in ctxs[1:]:
        view = derive(replace(state, ctx=ctx), view)
    judged = []
    monkeypatch.setattr(derive_module, "full_load", lambda *a, **k: judged.append(a[1].ctx))
    monkeypatch.setattr(ctx_tiers_module, "full_load", lambda *a, **k: judged.append(a[1].ctx))
    monkeypatch.setattr(derive_module, "cheapest_fix", lambda *a, **k: judged.append("fix"))
    for ctx in reversed(ctxs):
        view = derive(replace(state, ctx=ctx), view)
        assert view.full_load is not None and view.full_load.ctx == ctx
    assert judged == []
    monkeypatch.undo()
    assert (view.headline, view.tiers, view.fix) == (lambda f: (f.headline, f.tiers, f.fix))(derive(replace(state, ctx=4096)))


def test_an_asked_ctx_past_the_trained_one_searches_its_largest_ctx_again(llama8b):
    """The largest ctx that fits is searched up to an asked ctx past the trained context (`auto_ctx` Rule 5), so the
    previous tick's answer, searched to the trained context, is not taken over."""
    state = ExplorerState(model=llama8b, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=80 * GiB))
    view = derive(replace(state, ctx=4096))
    for ctx in (150_016, 200_192, 4096):
        view = derive(replace(state, ctx=ctx), view)
        fresh = derive(replace(state, ctx=ctx))
        assert (view.full_load.max_ctx, view.tiers) == (fresh.full_load.max_ctx, fresh.tiers)
    assert derive(replace(state, ctx=150_016)).full_load.max_ctx > llama8b.context_length


def test_empty_state():
    view = derive(ExplorerState())
    assert view.plan is None and view.headline.state is BannerState.EMPTY


def test_knobs_out_of_range_are_an_error_not_a_crash(llama8b):
    with pytest.raises(RequestError, match="^a ring depth must be from 1 to 8 buffers, got 9$"):
        ExplorerState(model=llama8b, budget=Budget.of(GiB), n_buffers=9)  # refused at the state's door
    assert plan_memory(llama8b, BudgetRequest(budget=Budget.of(GiB))).feasible
