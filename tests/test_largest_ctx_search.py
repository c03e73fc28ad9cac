"""The largest ctx that fits is aimed by the load's headroom, not bisected (core/fit/ctx/max_ctx.py Rule 3): the same
answer as a plain bisection and a walk over every candidate, for fewer verdicts and scheduler replays."""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.explorer import derive as derive_module
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit import estimate as estimate_module
from gguf_budget.core.fit.buffers import placed_graph
from gguf_budget.core.fit.ctx import max_ctx
from gguf_budget.core.fit.ctx.auto_ctx import FitCtxReason, auto_fit, largest_cap, largest_ctx
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx, last_fitting
from gguf_budget.core.fit.estimate import estimate_fit, fit_verdict
from gguf_budget.core.fit.types import FitRequest, FitVerdict
from gguf_budget.core.model.context import DEFAULT_CTX, ctx_ceiling
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.kv import ENGINE_CELL_PAD, KVType
from gguf_budget.core.plan.budget import Budget

GiB = 1 << 30


@given(n=st.integers(1, 600), data=st.data())
@settings(max_examples=300, deadline=None)
def test_the_aimed_search_finds_the_last_fitting_candidate_whatever_the_headroom_says(n, data):
    """Whatever headroom each candidate reports (none, wrong sign, far from a line), the answer is the last candidate
    that fits, as a walk over all of them finds it; the verdicts asked stay within about twice the bisection's."""
    last = data.draw(st.integers(-1, n - 1), label="last")
    spare = data.draw(st.lists(st.one_of(st.none(), st.integers(-10**12, 10**12)), min_size=n, max_size=n))
    start = data.draw(st.integers(0, n - 1), label="start")
    asked = []

    def judged(i):
        asked.append(i)
        return i <= last, spare[i]

    assert last_fitting(n, lambda i: ENGINE_CELL_PAD * (i + 1), judged, start) == last
    assert len(asked) <= 2 * math.ceil(math.log2(n + 1)) + 4


@given(n=st.integers(2, 600), data=st.data())
@settings(max_examples=200, deadline=None)
def test_a_headroom_that_falls_along_a_line_is_found_in_four_verdicts(n, data):
    """A headroom falling linearly with ctx, as a held placement's does (Rule 3): the cap, the first candidate, the
    aimed one and its neighbour (a bisection over 512 candidates asks 9)."""
    last = data.draw(st.integers(0, n - 2), label="last")
    slope = data.draw(st.integers(1, 1 << 20), label="bytes a token")
    zero = ENGINE_CELL_PAD * (last + 1) + data.draw(st.integers(0, ENGINE_CELL_PAD - 1))
    asked = []

    def judged(i):
        asked.append(i)
        spare = (zero - ENGINE_CELL_PAD * (i + 1)) * slope
        return spare >= 0, spare

    assert last_fitting(n, lambda i: ENGINE_CELL_PAD * (i + 1), judged) == last
    assert len(asked) <= 4


@given(n=st.integers(1, 600), data=st.data())
@settings(max_examples=300, deadline=None)
def test_a_search_from_a_fitting_start_aimed_at_any_rate_finds_the_last_fitting_candidate(n, data):
    """`max_ctx` Rule 6: a ctx known to fit beside the start (the start not judged where it is at or below it) and
    any rate of falling headroom, right or wrong, with any headroom the candidates report: the answer is the walk's,
    within about twice the bisection's verdicts."""
    last = data.draw(st.integers(0, n - 1), label="last")
    start = data.draw(st.integers(0, last), label="start")
    spare = data.draw(st.lists(st.one_of(st.none(), st.integers(-10**12, 10**12)), min_size=n, max_size=n))
    near = ENGINE_CELL_PAD * (start + 1) + data.draw(st.integers(-ENGINE_CELL_PAD + 1, ENGINE_CELL_PAD - 1), label="near")
    near_spare = data.draw(st.integers(0, 10**12), label="near's headroom")
    rate = data.draw(st.one_of(st.none(), st.tuples(st.integers(-5, 10**9), st.integers(-5, 10**6))), label="rate")
    asked = []

    def judged(i):
        asked.append(i)
        return i <= last, spare[i]

    assert last_fitting(n, lambda i: ENGINE_CELL_PAD * (i + 1), judged, start, (near, near_spare), rate) == last
    assert rate is None or start not in asked or near < ENGINE_CELL_PAD * (start + 1)
    assert len(asked) <= 2 * math.ceil(math.log2(n + 1)) + 4 + max_ctx.GUESSES


@given(n=st.integers(2, 600), data=st.data())
@settings(max_examples=200, deadline=None)
def test_a_headroom_falling_at_the_rate_given_is_found_in_two_verdicts(n, data):
    """A headroom falling linearly at the rate the caller gives, from a start that fits: the candidate past its zero and
    the one below (the cap is never judged unless it is the answer's neighbour or the answer)."""
    last = data.draw(st.integers(0, n - 1), label="last")
    start = data.draw(st.integers(0, last), label="start")
    slope = data.draw(st.integers(1, 1 << 20), label="bytes a token")
    zero = ENGINE_CELL_PAD * (last + 1) + data.draw(st.integers(0, ENGINE_CELL_PAD - 1))
    asked = []

    def spare_at(i):
        return (zero - ENGINE_CELL_PAD * (i + 1)) * slope

    def judged(i):
        asked.append(i)
        return spare_at(i) >= 0, spare_at(i)

    near = (ENGINE_CELL_PAD * (start + 1), spare_at(start))
    assert last_fitting(n, lambda i: ENGINE_CELL_PAD * (i + 1), judged, start, near, (slope, 1)) == last
    assert len(asked) <= 2 and (n - 1 not in asked or last >= n - 2)


@given(which=st.sampled_from(["8b", "70b"]), gpu=st.integers(2, 48), ram=st.sampled_from([16, 64, 128]),
       layers=st.one_of(st.none(), st.integers(0, 81)), ctx=st.integers(1, 131_072),
       kv=st.sampled_from([KVType.F16, KVType.Q8_0, KVType.Q4_0]), gpus=st.sampled_from([1, 2]))
@settings(max_examples=60, deadline=None)
def test_the_largest_ctx_beside_a_load_is_the_bisections(llama8b, llama70b, which, gpu, ram, layers, ctx, kv, gpus):
    """The 8B and 70B beside a full load on one or two GPUs (`auto_ctx.largest_ctx`: the search starts below the load's
    ctx and aims at its falling headroom, `max_ctx` Rule 6): the plain bisection's answer."""
    model = load_model(catalogue_path(find_entry("llama-3.1-8b-instruct" if which == "8b" else "llama-3.1-70b-instruct")))
    machine = hypothetical_machine(ram * GiB, gpu_count=gpus, gpu_total=gpu * GiB)
    request = FitRequest(ctx=ctx, kv_type=kv, gpu_layers=None if layers is None else min(layers, model.n_layer + 1))
    choice = auto_fit(model, machine, request)
    held = replace(request, ctx=None, gpu_layers=choice.fit.gpu_layers)
    assert largest_ctx(model, machine, choice) == bisected(model, machine, held, choice.fit.gpu_layers,
                                                           largest_cap(choice))


def test_beside_a_load_the_host_holds_tightest_the_search_keeps_rule_3_s_order(monkeypatch):
    """`max_ctx` Rule 6's exception: a hybrid model on a 16 GiB host alone, where llama-server's prompt cache follows what
    the host has left and the load fits at 592k-596k tokens, not at 598k-639k, again at 641k-645k: no rate aims the
    search, which judges the cap first and answers as Rule 3 did (646,912; aimed at the host's zero it was 596,736)."""
    model = load_model(catalogue_path(find_entry("granite-4.0-h-tiny")))  # its own object: nothing kept for it
    machine = hypothetical_machine(16 * GiB)
    choice = auto_fit(model, machine, FitRequest(ctx=97_792))
    asked = []
    real = max_ctx.fit_headroom
    monkeypatch.setattr(max_ctx, "fit_headroom", lambda m, snap, request: asked.append(request.ctx) or real(m, snap, request))
    assert choice.fit.gpu_layers == 0 and choice.fit.verdict.admitted
    assert largest_ctx(model, machine, choice) == 646_912 and asked[0] == largest_cap(choice)


def bisected(model, machine, request, layers, cap):
    """The plain reference: a bisection over every candidate's verdict (the search before it was aimed)."""
    n = max(-(-cap // ENGINE_CELL_PAD), 1)
    ctx = [cap if i == n - 1 else ENGINE_CELL_PAD * (i + 1) for i in range(n)]
    held = replace(request, gpu_layers=layers)
    last = bisect_left(range(n), True, key=lambda i: not fit_verdict(model, machine, replace(held, ctx=ctx[i])).admitted) - 1
    return None if last < 0 else ctx[last]


@given(which=st.sampled_from(["8b", "70b"]), gpu=st.integers(2, 48), ram=st.sampled_from([16, 64, 128]),
       layers=st.integers(0, 81), cap=st.integers(1, 131_072), kv=st.sampled_from([KVType.F16, KVType.Q8_0]),
       near=st.one_of(st.none(), st.integers(1, 140_000)))
@settings(max_examples=60, deadline=None)
def test_the_largest_ctx_is_the_bisections_on_real_models(llama8b, llama70b, which, gpu, ram, layers, cap, kv, near):
    """The 8B and 70B catalogue files on many machines, GPU layers, caps and cache types: the aimed search (from any
    `near`, even one that does not fit) gives the plain bisection's answer."""
    model = llama8b if which == "8b" else llama70b
    machine = hypothetical_machine(ram * GiB, gpu_count=1, gpu_total=gpu * GiB)
    request = FitRequest(kv_type=kv)
    layers = min(layers, model.n_layer + 1)
    assert largest_fitting_ctx(model, machine, request, layers, cap, near) == bisected(model, machine, request, layers, cap)


def test_the_largest_ctx_is_a_walk_s_over_every_candidate(llama70b):
    """Every candidate up to a cap of 16,384 walked, for GPU-layer counts whose largest ctx lies below, inside and
    past it: the aimed search's answer is the last that fits, and every one below it fits."""
    machine = hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB)
    cap = 16_384
    for layers in (0, 40, 42, 44, 45, 46, 81):
        fitting = [fit_verdict(llama70b, machine, FitRequest(ctx=c, gpu_layers=layers)).admitted
                   for c in range(ENGINE_CELL_PAD, cap + 1, ENGINE_CELL_PAD)]
        walked = sum(fitting)
        assert fitting == [True] * walked + [False] * (len(fitting) - walked)
        assert largest_fitting_ctx(llama70b, machine, FitRequest(), layers, cap) == (walked * ENGINE_CELL_PAD or None)


@pytest.fixture
def counted(monkeypatch):
    """Verdicts priced with their compute buffers and scheduler replays made, from here on."""
    made = {"priced": 0, "replays": 0}
    priced, replayed = estimate_module.device_computes, placed_graph.compute_buffers

    def pricing(*a, **k):
        made["priced"] += 1
        return priced(*a, **k)

    def replaying(*a, **k):
        made["replays"] += 1
        return replayed(*a, **k)

    monkeypatch.setattr(estimate_module, "device_computes", pricing)
    monkeypatch.setattr(placed_graph, "compute_buffers", replaying)
    return made


def test_a_70b_search_from_the_window_s_own_load_replays_three_graphs_at_most(counted):
    """The 70B on a 24 GiB GPU, searched from the asked ctx its automatic GPU layers were priced at (`near`): the cap
    (mostly short before its compute buffer), the asked ctx (its replay kept), the aimed candidate, its neighbour and
    at most one aim again. The bisection priced 7-9 verdicts, each a new replay."""
    model = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))  # its own object: nothing kept for it
    machine = hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB)
    for ctx in (2816, 16128, 40192, 61440, 88320, 114944):
        load = estimate_fit(model, machine, FitRequest(ctx=ctx))
        assert load.verdict.admitted
        counted.update(priced=0, replays=0)
        found = max_ctx.largest_fitting_ctx(model, machine, FitRequest(), load.gpu_layers, 131_072, ctx)
        assert found is not None and found >= ctx
        assert counted["priced"] <= 5 and counted["replays"] <= 3, (ctx, counted)


def test_a_70b_ctx_tick_at_a_ctx_not_met_before_replays_five_graphs_at_most(counted):
    """The window's tick on the 70B (128 GiB, one 24 GiB GPU) across ctxs not met before, each holding other GPU layers:
    its own full load, the largest ctx and the new largest tier together replay at most five graphs (the bisection's
    search alone replayed 7-10)."""
    model = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))
    state = ExplorerState(model=model, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB))
    view = derive(replace(state, ctx=4096))
    layers = {view.full_load.fit.gpu_layers}
    for ctx in (13568, 24064, 34816, 45568, 56320, 66816, 80128, 96256, 114944):
        counted.update(priced=0, replays=0)
        view = derive(replace(state, ctx=ctx), view)
        layers.add(view.full_load.fit.gpu_layers)
        assert counted["replays"] <= 5, (ctx, counted)
    assert len(layers) == 10 and view.headline == derive_module.derive(replace(state, ctx=114944)).headline


def shrunk_by_bisection(model, machine, request, cap):
    """The plain reference for llama.cpp's default ctx (`auto_ctx` Rule 2): a bisection over the floor, the multiples of
    256 between and the ceiling, each judged as Rule 3 says."""
    ceiling = ctx_ceiling(model.context_length, cap)
    floor = min(DEFAULT_CTX, ceiling)
    ctxs = [floor, *range(-(-(floor + 1) // ENGINE_CELL_PAD) * ENGINE_CELL_PAD, ceiling, ENGINE_CELL_PAD)]
    ctxs += [ceiling] if ceiling > floor else []

    def whole(ctx):
        if request.gpu_layers is None and machine.gpus:
            return fit_verdict(model, machine, replace(request, ctx=ctx, gpu_layers=model.n_layer + 1)) is FitVerdict.FITS_GPU
        return fit_verdict(model, machine, replace(request, ctx=ctx)).admitted

    last = bisect_left(range(len(ctxs)), True, key=lambda i: not whole(ctxs[i])) - 1
    return ctxs[max(last, 0)], last < 0


@given(which=st.sampled_from(["8b", "70b"]), gpu=st.integers(0, 48), ram=st.sampled_from([8, 16, 64, 128]),
       layers=st.one_of(st.none(), st.integers(0, 81)), cap=st.one_of(st.none(), st.integers(1, 131_072)),
       kv=st.sampled_from([KVType.F16, KVType.Q8_0]))
@settings(max_examples=60, deadline=None)
def test_llama_cpp_s_default_ctx_is_the_bisections(llama8b, llama70b, which, gpu, ram, layers, cap, kv):
    """The ctx llama.cpp's default `--fit` shrinks to, aimed the same way (`auto_ctx` Rule 6): the bisection's."""
    model = llama8b if which == "8b" else llama70b
    machine = hypothetical_machine(ram * GiB, gpu_count=1, gpu_total=gpu * GiB) if gpu else hypothetical_machine(ram * GiB)
    request = FitRequest(kv_type=kv, gpu_layers=None if layers is None else min(layers, model.n_layer + 1))
    choice = auto_fit(model, machine, request, cap)
    ctx, floor = shrunk_by_bisection(model, machine, request, cap)
    assert (choice.ctx, choice.reason is FitCtxReason.FLOOR) == (ctx, floor)


def test_a_model_that_fits_at_its_trained_ctx_is_judged_there_once(llama8b, monkeypatch):
    """The 8B on a 48 GiB GPU fits every layer at its 131,072-token context: one verdict there and the reported
    estimate (the bisection judged 9 candidates first)."""
    judged = []
    real = estimate_module._judge
    monkeypatch.setattr(estimate_module, "_judge", lambda *a, **k: judged.append(a[2].ctx) or real(*a, **k))
    choice = auto_fit(llama8b, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=48 * GiB), FitRequest())
    assert choice.reason is FitCtxReason.CEILING and judged == [131_072, 131_072]
