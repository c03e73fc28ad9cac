"""One replay answers a span of ctx exactly (core/fit/buffers/placed_graph.py Rule 5, core/fit/buffers/affine.py): for
real placements of small factory models and the catalogue's skeletons, a span's buffers at any cells inside it are the
plain replay's there, byte for byte, for every backend; and a ctx drag on the 70B replays a few graphs, not one per ask.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit import runtime_memory
from gguf_budget.core.fit.buffers import placed_graph
from gguf_budget.core.fit.buffers.affine import Affine, Domain, Peak, cells_of, floor_times, highest, lines_of
from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.buffers.compute_graph import GraphSettings, compute_nodes
from gguf_budget.core.fit.buffers.placed_graph import device_buffers, graph_key, split_graph_of
from gguf_budget.core.fit.buffers.sched import Scheduler, compute_buffers
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings, TensorOverride
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.kv import ENGINE_CELL_PAD, KVType
from gguf_budget.core.plan.budget import Budget

GiB = 1 << 30
MAX_CELLS = 1 << 18
CATALOGUE = ("llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "qwen3-30b-a3b-instruct-2507", "gemma-3-4b-it",
             "deepseek-v2-lite")
SMALL = {
    "dense": ArchDesc(n_layer=4, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, n_vocab=512, weight_type=T.Q4_K,
                      layer_mix={1: {"ffn_down": T.Q6_K}}),
    "moe": ArchDesc(arch="qwen3moe", n_layer=3, n_embd=128, n_ff=256, n_head=4, n_head_kv=2, n_vocab=512, n_expert=8,
                    n_expert_used=2, expert_ff=96, qk_norm=True),
    "swa": ArchDesc(arch="gemma3", n_layer=6, n_embd=128, n_ff=256, n_head=4, n_head_kv=1, head_dim=64, n_vocab=512,
                    sliding_window=512, qk_norm=True, post_norms=True),
    "odd": ArchDesc(n_layer=3, n_embd=96, n_ff=200, n_head=3, n_head_kv=1, head_dim=40, n_vocab=300,
                   weight_type=T.F16),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The catalogue's 8B, 70B, an MoE, a gemma-3 (SWA) and an MLA model, and small factory shapes (an odd head
    size: a cache row that is no whole number of quantized blocks' bytes), each read afresh when asked: a model
    object of its own, for which nothing is kept (each example's fit asks its own graphs)."""
    paths = {name: catalogue_path(find_entry(name)) for name in CATALOGUE}
    for name, desc in SMALL.items():
        paths[name] = write_gguf(tmp_path_factory.mktemp(name) / "m.gguf", desc, "header_only")[0]
    return lambda name: load_model(paths[name])


def _fit_asks(model, machine, request):
    """Every (settings, scheduler) the fit asks compute buffers for (none where the request is refused)."""
    made = []
    real = runtime_memory.device_buffers

    def spying(m, settings, sched):
        made.append((settings, sched))
        return real(m, settings, sched)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime_memory, "device_buffers", spying)
        try:
            estimate_fit(model, machine, request)
        except RequestError:
            return []
    return made


def _plain(model, settings, sched):
    """The plain replay: the same allocator over the plain int sizes of `settings`' own cells."""
    return compute_buffers(compute_nodes(model, settings, graph_key(model, settings, sched).blocks,
                                         kv_on_cpu=sched.kv_on_cpu), sched)


def _span(model, settings, sched):
    """One replay with the cells a parameter (placed_graph Rule 7): the placement's split graph and its allocator."""
    return split_graph_of(model, graph_key(model, settings, sched)).span_at(settings.full_cells, sched.alignments)


placements = st.fixed_dictionaries({
    "gpus": st.integers(1, 3),
    "gpu_gib": st.integers(1, 48),
    "layers": st.one_of(st.none(), st.integers(0, 81)),
    "ctx": st.integers(1, 131_072),
    "kv": st.sampled_from([KVType.F16, KVType.Q8_0, KVType.Q4_0, KVType.Q5_1]),
    "v": st.sampled_from([None, KVType.F16, KVType.Q8_0]),
    "fa": st.sampled_from([None, True, False]),
    "kv_offload": st.booleans(),
    "ubatch": st.sampled_from([1, 32, 100, 512, 2048]),
    "n_cpu_moe": st.one_of(st.none(), st.integers(0, 50)),
    "ot": st.sampled_from([(), (TensorOverride(r"blk\.[02]\.ffn_(down|up)", "CPU"),),
                           (TensorOverride(r"blk\.1\.ffn_gate", "CPU"),)]),
    "backend": st.sampled_from([None, GpuBackend.VULKAN, GpuBackend.RPC, GpuBackend.METAL]),
    "picks": st.lists(st.integers(0, 1 << 30), min_size=6 * 3, max_size=6 * 3),
})


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(CATALOGUE + tuple(SMALL)), p=placements)
def test_a_span_s_buffers_are_the_plain_replay_s_at_every_cells_inside_it(models, name, p):
    """Every graph a fit prices (its placement, the automatic GPU layers' and the expert offload's searches), replayed
    once with the cells a parameter: at cells drawn inside its span, its buffers equal a plain replay's there, for
    every backend; and `device_buffers` asked there answers the same."""
    model = models(name)
    engine = EngineSettings(ubatch=p["ubatch"], flash_attn=p["fa"], kv_offload=p["kv_offload"], overrides=p["ot"],
                            gpu_backend=p["backend"])
    request = FitRequest(ctx=p["ctx"], gpu_layers=p["layers"], kv_type=p["kv"], v_type=p["v"],
                         n_cpu_moe=p["n_cpu_moe"] if model.expert_count else None, engine=engine)
    machine = hypothetical_machine(128 * GiB, gpu_count=p["gpus"], gpu_total=p["gpu_gib"] * GiB)
    picks = iter(p["picks"])
    asked = _fit_asks(model, machine, request)
    for gs, sched in asked[:6]:
        span = _span(model, gs, sched)
        assert span.buffers_at(gs.full_cells) == _plain(model, gs, sched)
        first = -((span.at - max(span.lo, ENGINE_CELL_PAD)) // span.step)
        last = (min(span.hi, MAX_CELLS) - span.at) // span.step
        for cells in (span.at + span.step * (first + next(picks) % (last - first + 1)) for _ in range(2)):
            there = replace(gs, full_cells=cells)
            assert span.holds(cells)
            assert span.buffers_at(cells) == _plain(model, there, sched), (name, cells, span)
            assert device_buffers(model, there, sched) == span.buffers_at(cells)
        beside = replace(gs, full_cells=(1 + next(picks) % (MAX_CELLS // ENGINE_CELL_PAD)) * ENGINE_CELL_PAD)
        assert device_buffers(model, beside, sched) == _plain(model, beside, sched), (name, beside.full_cells)


@settings(max_examples=40, deadline=None)
@given(gpus=st.integers(1, 3), start=st.integers(0, 13), kv_on_cpu=st.booleans(), fa=st.booleans(),
       ubatch=st.sampled_from((1, 32, 512)), limit=st.sampled_from((None, 300_000, 700_000, 3_000_000)),
       copies=st.sampled_from((1, 4)), k_size=st.sampled_from((2.0, 34 / 32, 18 / 32)), pick=st.integers(0, 1 << 30),
       cells=st.integers(1, 256).map(lambda n: n * ENGINE_CELL_PAD))
def test_a_span_holds_where_a_gpu_s_tensor_limit_moves_ops_by_their_size(models, gpus, start, kv_on_cpu, fa, ubatch,
                                                                         limit, copies, k_size, pick, cells):
    """sched Rule 8 (Vulkan's largest tensor) places an op by its size, and pipeline copies keep every copied tensor:
    the span's comparisons hold those decisions too, so its buffers are still the plain replay's inside it."""
    model = models("dense")
    n = model.n_layer
    slot = tuple(gpus if i < start else i % gpus for i in range(n + 1))
    sched = Scheduler(alignments=(128,) * gpus + (32,), offload=(32,) * gpus + (None,), slot_device=slot,
                      kv_device=tuple(gpus if kv_on_cpu else d for d in slot[:n]), kv_on_cpu=kv_on_cpu,
                      max_tensor=(limit,) * gpus, copies=copies if gpus > 1 else 1, pin_norms=start == 0)
    gs = GraphSettings(ubatch=ubatch, outputs=1, flash_attn=fa, full_cells=cells, swa_cells=0, rot_k=0, rot_v=0,
                       k_size=k_size, v_size=k_size)
    span = _span(model, gs, sched)
    first = -((span.at - max(span.lo, ENGINE_CELL_PAD)) // span.step)
    last = (min(span.hi, MAX_CELLS) - span.at) // span.step
    there = span.at + span.step * (first + pick % (last - first + 1))
    assert span.buffers_at(there) == _plain(model, replace(gs, full_cells=there), sched), (there, span)


def test_a_70b_ctx_drag_replays_far_fewer_graphs_than_it_asks_for(monkeypatch):
    """The window's ctx tick on the 70B (128 GiB, one 24 GiB GPU) dragged over 50 ctxs across the slider, each new:
    its load, the automatic GPU layers and the largest ctx ask 136 distinct (placement, cells) graphs, each a replay
    before; the spans answer all but 24 of them (at most a fifth here)."""
    model = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))  # its own object: nothing kept for it
    asked, replays = set(), []
    real_ask, real_replay = runtime_memory.device_buffers, placed_graph.compute_buffers

    def asking(m, gs, sched):
        asked.add((graph_key(m, gs, sched), gs.full_cells))
        return real_ask(m, gs, sched)

    def replaying(*a, **k):
        replays.append(1)
        return real_replay(*a, **k)

    monkeypatch.setattr(runtime_memory, "device_buffers", asking)
    monkeypatch.setattr(placed_graph, "compute_buffers", replaying)
    state = ExplorerState(model=model, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB))
    view = derive(replace(state, ctx=4096))
    for ctx in range(4096 + 2560, 131_072, 2560):
        view = derive(replace(state, ctx=ctx), view)
    assert len(asked) >= 100 and len(replays) * 5 <= len(asked), (len(asked), len(replays))


def test_a_70b_drag_past_its_narrow_spans_replays_no_allocator(monkeypatch):
    """placed_graph Rule 8: a narrow span says nothing of cells far from it. The 70B's ctx ticks (128 GiB, one 24 GiB
    GPU) over new ctxs from 29,440 tokens on, after a drag below: the placements there share a key with those the drag
    below priced in narrow spans, and the first ask past them takes a span with the cells a parameter that answers
    every later one (the old rule replayed the allocator over plain ints at almost every tick, 37 times here)."""
    model = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))  # its own object: nothing kept for it
    state = ExplorerState(model=model, budget=Budget.of(40 * GiB),
                          machine=hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB))
    view = derive(replace(state, ctx=4096))
    for ctx in range(4096 + 2688, 29_440, 2688):
        view = derive(replace(state, ctx=ctx), view)
    made: list[bool] = []
    real = placed_graph.SplitGraph.span_at
    monkeypatch.setattr(placed_graph.SplitGraph, "span_at",
                        lambda self, cells, al, parametric=True: made.append(parametric) or real(self, cells, al, parametric))
    for ctx in range(29_440, 131_072, 2688):
        view = derive(replace(state, ctx=ctx), view)
    assert made.count(False) <= 2 and len(made) <= 4, made
    fresh = replace(state, model=replace(model), ctx=ctx)  # an equal model, another object: priced afresh
    assert view.full_load == derive(fresh).full_load


def _dense_on_one_gpu(models) -> tuple:
    """The dense model all on GPU 0 at 32k cells, asked once: the model, its graph settings, its scheduler and the
    spans its key keeps (a test adds its own beside them)."""
    model = models("dense")
    n = model.n_layer
    sched = Scheduler(alignments=(128, 32), offload=(32, None), slot_device=(0,) * (n + 1), kv_device=(0,) * n)
    gs = GraphSettings(ubatch=512, outputs=1, flash_attn=True, full_cells=32 * 1024, swa_cells=0, rot_k=0, rot_v=0)
    device_buffers(model, gs, sched)
    return model, gs, sched, placed_graph._spans(model, graph_key(model, gs, sched))


def test_a_narrow_span_far_below_the_ask_leaves_it_a_span_with_the_cells_a_parameter(models, monkeypatch):
    """placed_graph Rule 8: a span narrower than WIDE steps, its cells far from the ask's, tells only asks under FAR
    times its cells: above them the allocator replays with the cells a parameter, as with no span beside it; below
    them over plain ints. Both answers are the plain replay's."""
    model, gs, sched, spans = _dense_on_one_gpu(models)
    step = ENGINE_CELL_PAD
    spans.append(placed_graph.Span(at=4096, step=step, lo=4096 - step, hi=4096 + step, buffers=((((0, 0),),) * 2)))
    made: list[bool] = []
    real = placed_graph.SplitGraph.span_at
    monkeypatch.setattr(placed_graph.SplitGraph, "span_at",
                        lambda self, cells, al, parametric=True: made.append(parametric) or real(self, cells, al, parametric))
    asked = (4096 + step * (placed_graph.WIDE + 2), 4096 * placed_graph.FAR)
    answers = [device_buffers(model, replace(gs, full_cells=c), sched) for c in asked]
    assert answers == [_plain(model, replace(gs, full_cells=c), sched) for c in asked]
    assert made == [False, True]


def test_a_comparison_narrows_the_span_to_where_its_answer_holds():
    """affine Rule 3: an inequality keeps a half-line, a true equality of two lines the ask alone."""
    d = Domain()
    x = cells_of(4096, d) * 512 * 4  # 8 MiB at the ask, 512 KiB a step of 256 cells
    assert x < GiB and (d.lo, d.hi) == (-Domain().hi, (GiB - 1 - 8 * 2**20) // 2**19)
    assert x > 0 and d.lo == -15
    assert (x == 8 * 2**20) and (d.lo, d.hi) == (0, 0)


def test_what_is_not_affine_pins_the_span_to_the_ask():
    """affine Rule 4: an alignment the slope misses, a product of two lines, a hash: the ask alone, its answer exact."""
    for use in (lambda x: -(-x // 128) * 128, lambda x: x * x, hash, lambda x: x % 7, float, lambda x: x & 3):
        d = Domain()
        x = cells_of(4096, d) * 3 // 256  # 48 at the ask, 3 a step: off every alignment
        assert int(use(x)) == int(use(48)) and (d.lo, d.hi) == (0, 0)


def test_a_fractional_cache_type_s_floor_stays_affine_over_the_grid():
    """`floor_times`: q8_0's 34/32 bytes an element over 256 cells a step is a whole 272 bytes an element-step."""
    d = Domain()
    row = floor_times(cells_of(4096, d) * 40, 34 / 32)
    assert isinstance(row, Affine) and (row.a, row.s) == (int(4096 * 40 * 34 / 32), 256 * 40 * 34 // 32)
    assert (d.lo, d.hi) == (Domain().lo, Domain().hi)
    odd = floor_times(cells_of(4096 + 3, d) * 40, 34 / 32)
    assert odd == int((4096 + 3) * 40 * 34 / 32) and (d.lo, d.hi) == (0, 0)


def test_the_high_water_mark_keeps_each_line_and_compares_none():
    """affine Rule 5: the highest of two crossing lines is each one's where it is highest, with no τ narrowed."""
    d = Domain()
    x = cells_of(4096, d)
    peak = highest(highest(0, x * 2 + 100), 9000)
    assert isinstance(peak, Peak) and (d.lo, d.hi) == (Domain().lo, Domain().hi)
    assert sorted(lines_of(peak)) == [(8292, 512), (9000, 0)]
    assert peak == 9000 and (d.lo, d.hi) == (0, 0)  # read as an int: Rule 4


def test_a_placement_asked_at_one_ctx_replays_over_plain_ints_and_at_others_its_allocator_over_one_split_graph(
        models, monkeypatch):
    """placed_graph Rules 6–7: the first ask of a placement is a plain replay (a search over placements at one ctx pays
    nothing for spans it never uses); an ask at other cells builds the placement's split graph once, with the cells a
    parameter, and replays the allocator over it; an ask its spans miss after that replays the allocator alone, and
    asks inside a span replay nothing. Every answer is the plain replay's."""
    model = models("dense")
    n = model.n_layer
    sched = Scheduler(alignments=(128, 32), offload=(32, None), slot_device=(0,) * (n + 1), kv_device=(0,) * n)
    gs = GraphSettings(ubatch=512, outputs=1, flash_attn=True, full_cells=32 * 1024, swa_cells=0, rot_k=0, rot_v=0)
    made: list[str] = []

    def counted(name, real):
        return lambda *a, **k: made.append(name) or real(*a, **k)

    monkeypatch.setattr(placed_graph, "replay", counted("replay", placed_graph.replay))
    monkeypatch.setattr(placed_graph, "split_graph_of", counted("split", placed_graph.split_graph_of))
    monkeypatch.setattr(placed_graph.SplitGraph, "span_at", counted("allocator", placed_graph.SplitGraph.span_at))
    at = [device_buffers(model, replace(gs, full_cells=c), sched) for c in (32 * 1024, 32 * 1024, 48 * 1024)]
    assert made == ["replay", "split", "allocator"]
    span = placed_graph._spans(model, graph_key(model, replace(gs, full_cells=48 * 1024), sched))[-1]
    inside = list(range(max(span.lo, ENGINE_CELL_PAD), min(span.hi, MAX_CELLS) + 1, span.step))[:5]
    outside = [c for c in (span.lo - ENGINE_CELL_PAD, span.hi + ENGINE_CELL_PAD) if ENGINE_CELL_PAD <= c <= MAX_CELLS]
    assert len(inside) == 5 and span.step == ENGINE_CELL_PAD and outside
    asked = inside + outside
    assert [device_buffers(model, replace(gs, full_cells=c), sched) for c in asked] == \
        [_plain(model, replace(gs, full_cells=c), sched) for c in asked]
    assert made == ["replay", "split", "allocator"] + ["allocator"] * len(outside)
    assert at[:2] == [_plain(model, gs, sched)] * 2 and at[2] == _plain(model, replace(gs, full_cells=48 * 1024), sched)


def test_where_the_nearest_span_is_narrow_the_allocator_replays_over_plain_ints(models, monkeypatch):
    """placed_graph Rule 8: an ask beside a span narrower than WIDE steps replays the allocator over plain ints (a span of
    its own cells), one beside a wide span with the cells a parameter; both answers are the plain replay's."""
    model, gs, sched, spans = _dense_on_one_gpu(models)
    step = ENGINE_CELL_PAD
    narrow = placed_graph.Span(at=64 * 1024, step=step, lo=64 * 1024 - step, hi=64 * 1024 + step,
                               buffers=((((0, 0),),) * 2))
    wide = placed_graph.Span(at=96 * 1024, step=step, lo=96 * 1024 - step * placed_graph.WIDE, hi=96 * 1024,
                             buffers=((((0, 0),),) * 2))
    spans += [narrow, wide]
    made: list[bool] = []
    real = placed_graph.SplitGraph.span_at
    monkeypatch.setattr(placed_graph.SplitGraph, "span_at",
                        lambda self, cells, al, parametric=True: made.append(parametric) or real(self, cells, al, parametric))
    asked = (64 * 1024 + 2 * step, 96 * 1024 + step)
    answers = [device_buffers(model, replace(gs, full_cells=c), sched) for c in asked]
    assert made == [False, True]
    assert answers == [_plain(model, replace(gs, full_cells=c), sched) for c in asked]
    assert spans[-2].lo == spans[-2].hi == asked[0] and spans[-1].hi > spans[-1].lo
