"""A tick at a ctx the session has not met prices what moves with the ctx and looks the rest up: each count here is of
work the old code did again at every new ctx (every load it judged, every workload of the peak-RSS band), though its
answer depends on the model or the placement alone."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_scenarios import write_models
from test_largest_ctx_search import bisected

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine
from gguf_budget.core.fit import estimate, runtime_memory
from gguf_budget.core.fit.buffers import compute_graph
from gguf_budget.core.fit.buffers.sched import Scheduler
from gguf_budget.core.fit.ctx import max_ctx
from gguf_budget.core.fit.placement import options
from gguf_budget.core.fit.ctx.auto_ctx import FitCtxReason, auto_fit, largest_ctx
from gguf_budget.core.fit.estimate import fit_headroom
from gguf_budget.core.fit.server import session
from gguf_budget.core.fit.server.checkpoints import CheckpointSettings
from gguf_budget.core.fit.server.session_spec import SessionSpec
from gguf_budget.core.fit.server.slots import SlotLayout, slot_kv_table
from gguf_budget.core.model import kv
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec

GiB = 1 << 30
NEW_CTXS = (8192, 12288, 16384, 40960, 65536)


class _Counted(tuple):
    """A model's sequence, counting every walk over it and every slice taken of it."""

    walks = 0
    slices = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()

    def __getitem__(self, i):
        if isinstance(i, slice):
            type(self).slices += 1
        return super().__getitem__(i)


def _fresh(model: ModelSpec) -> ModelSpec:
    """An equal model that is another object: nothing another test priced is kept for it (`per_model` Rule 1)."""
    return dataclasses.replace(model)


def _machine():
    return hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB)


def _counting(model: ModelSpec, field: str) -> ModelSpec:
    counted = dataclasses.replace(model)
    object.__setattr__(counted, field, _Counted(getattr(model, field)))
    return counted


def _calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple[object, ...]]:
    """Every call of `module.name` from here on, by its arguments."""
    seen: list[tuple[object, ...]] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        seen.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return seen


def test_a_judged_load_walks_no_layer_list_and_sums_no_slice_of_the_blocks(llama70b):
    """Each load the searches judge counted the blocks by kind (the KV estimate, the unknown facts, the KV cells'
    metadata, the checkpoints: ~6 walks of the 80 layers) and summed the blocks' bytes below and above its split
    (2 slices); both are kept per model."""
    layers = _counting(llama70b, "layers")
    machine = _machine()
    fit_headroom(layers, machine, FitRequest(ctx=4096, gpu_layers=30))
    _Counted.walks = 0
    for ctx in NEW_CTXS:
        fit_headroom(layers, machine, FitRequest(ctx=ctx, gpu_layers=30))
    assert _Counted.walks == 0
    blocks = _counting(llama70b, "layer_bytes")
    fit_headroom(blocks, machine, FitRequest(ctx=4096, gpu_layers=30))
    _Counted.slices = 0
    for ctx in NEW_CTXS:
        fit_headroom(blocks, machine, FitRequest(ctx=ctx, gpu_layers=30))
        estimate_fit(blocks, machine, FitRequest(ctx=ctx))
    assert _Counted.slices == 0


def test_a_verdict_alone_tables_no_fp16_lower_bound(llama70b, monkeypatch):
    """The largest-ctx search asks verdicts only; the KV estimate's FP16 lower bound is the report's, not theirs."""
    llama70b = _fresh(llama70b)
    tables = _calls(monkeypatch, estimate, "layer_kv_table")
    machine = _machine()
    for ctx in NEW_CTXS:
        fit_headroom(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30))
    assert tables == []
    fit = estimate_fit(llama70b, machine, FitRequest(ctx=8192, gpu_layers=30))
    assert len(tables) == 1 and tables[0][2] is KVType.F16 and fit.kv.lower_bound


def test_a_placement_is_scheduled_and_its_flash_attention_resolved_once(llama70b, monkeypatch):
    """The scheduler's backends and `-fa auto`'s resolution read the GPUs' slots alone: pricing one placement at five
    new ctxs made both anew for every load (and again for its peak-RSS band)."""
    llama70b = _fresh(llama70b)
    machine = _machine()
    estimate_fit(llama70b, machine, FitRequest(ctx=4096, gpu_layers=30))
    scheduled = _calls(monkeypatch, runtime_memory, "Scheduler")
    resolved = _calls(monkeypatch, runtime_memory, "resolve")
    for ctx in NEW_CTXS:
        fit_headroom(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30))
        estimate_fit(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30), report=False)
    assert scheduled == [] and resolved == []


def test_the_band_at_a_new_ctx_prices_only_the_full_contexts_graph(llama70b, monkeypatch):
    """The band's short end and the session's requests run the same graphs at every ctx: at a new ctx only the
    filled context's graph is new (the GPU layers held), so only its CPU work is priced; and with GPU layers its host
    share is the graph's inputs (`graph_inputs`), without replaying the allocator over the whole graph
    (`compute_buffer`) or building its blocks (`compute_nodes`): its inputs alone (`input_bytes`), which are the whole
    graph's, byte for byte."""
    llama70b = _fresh(llama70b)
    machine = _machine()
    estimate_fit(llama70b, machine, FitRequest(ctx=4096, gpu_layers=30))
    work = _calls(monkeypatch, runtime_memory, "work_bytes")
    whole = _calls(monkeypatch, runtime_memory, "compute_buffer")
    built = _calls(monkeypatch, runtime_memory, "compute_nodes")
    inputs = _calls(monkeypatch, runtime_memory, "input_bytes")
    for ctx in NEW_CTXS:
        fit = estimate_fit(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30))
        assert fit.memory is not None and fit.memory.full is not None and fit.memory.along
    cells = sorted({args[4] for args in work})
    assert len(work) == len(NEW_CTXS) and cells == sorted(-(-c // 256) * 256 for c in NEW_CTXS)
    assert whole == [] and built == [] and inputs
    for model, settings_ in inputs:
        graph = compute_graph.compute_nodes(model, settings_)
        assert compute_graph.input_bytes(model, settings_) == sum(n.nbytes for n in graph if n.is_input)


def test_a_drag_replays_its_session_once(llama70b, monkeypatch):
    """Every load a tick judges replayed llama-server's session (`session`) at its own slot context, cells and cache
    limit; none of those tells this session apart once above its widest request, its conversations' cells and its
    entries (`session` Rule 6): of five new ctxs on one placement, 8,192 cells are below the typical chat's four
    conversations of 2,800 tokens and replay it there; the four above share one replay (and one bounding)."""
    llama70b = _fresh(llama70b)
    made = _calls(monkeypatch, session, "_Server")
    machine = _machine()
    for ctx in NEW_CTXS:
        fit_headroom(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30))
        estimate_fit(llama70b, machine, FitRequest(ctx=ctx, gpu_layers=30))
    assert [m.n_ctx for _, m in made] == [0, 8192, 11200]


def test_the_largest_ctx_search_takes_the_full_loads_own_verdict(llama70b, monkeypatch):
    """The largest ctx beside a full load that fits at its asked ctx (a candidate: a multiple of 256) is searched from
    there (`max_ctx` Rule 3): that candidate's verdict and headroom are the load's own, never asked again (the old
    search judged it once more, one verdict of its four or five), and the answer is the bisection's."""
    llama70b = _fresh(llama70b)
    machine = _machine()
    choices = [auto_fit(llama70b, machine, FitRequest(ctx=ctx)) for ctx in NEW_CTXS]
    asked = _calls(monkeypatch, max_ctx, "fit_headroom")
    for choice in choices:
        assert choice.fit.verdict.admitted and choice.reason is FitCtxReason.ASKED
        held = choice.fit.gpu_layers
        assert largest_ctx(llama70b, machine, choice) == bisected(llama70b, machine, FitRequest(), held, 131_072)
    judged = [(request.gpu_layers, request.ctx) for _, _, request in asked]
    assert judged and not {(c.fit.gpu_layers, c.ctx) for c in choices} & set(judged)


def test_the_largest_ctx_search_aims_at_the_load_s_falling_headroom(llama70b, monkeypatch):
    """The largest ctx beside a full load that fits, at asked ctxs on and off the candidates (`max_ctx` Rule 6): the
    candidate below the asked ctx fits unjudged, and the first verdict is where the load's headroom, falling as its
    GPU's KV cache grows, reaches zero, not the cap. Two or three verdicts a search (the old search asked three to
    five: the cap, the candidate below an asked ctx off the candidates, two or three aimed), and the bisection's
    answer."""
    llama70b = _fresh(llama70b)
    machine = _machine()
    ctxs = (8064, 13440, 26752, 45440, 50816, 66816, 88192, 104320)
    choices = [auto_fit(llama70b, machine, FitRequest(ctx=ctx)) for ctx in ctxs]
    assert len({c.fit.gpu_layers for c in choices}) == len(ctxs)
    asked = _calls(monkeypatch, max_ctx, "fit_headroom")
    for choice in choices:
        assert choice.fit.verdict.admitted and choice.reason is FitCtxReason.ASKED
        del asked[:]
        found = largest_ctx(llama70b, machine, choice)
        assert found == bisected(llama70b, machine, FitRequest(), choice.fit.gpu_layers, 131_072)
        judged = [request.ctx for _, _, request in asked]
        assert 131_072 not in judged and len(judged) <= 3, (choice.ctx, judged)


def test_the_gpu_layer_bound_at_a_new_ctx_starts_from_the_last_ctx_s(llama70b, monkeypatch):
    """estimate Rule 5 (`gpu_split` Rule 5): on one GPU the most layers that fit before their compute buffers, at each new
    ctx of a drag, is searched from its answer at the ctx before (kept per model and machine): two or three
    placements a ctx, not the bisection's seven, and the same automatic GPU layers as a model priced afresh."""
    llama70b = _fresh(llama70b)
    machine = _machine()
    asked: list[int] = []
    real = estimate.most_layers_that_fit

    def counting(n_layer, fits, upper=None, near=None):
        def counted(g):
            asked.append(g)
            return fits(g)
        chosen = counted if upper is None else fits
        return real(n_layer, chosen, upper) if near is None else real(n_layer, chosen, upper, near=near)

    monkeypatch.setattr(estimate, "most_layers_that_fit", counting)
    ctxs = range(13_440, 131_072, 2688)
    autos = []
    for ctx in ctxs:
        del asked[:]
        autos.append(estimate_fit(llama70b, machine, FitRequest(ctx=ctx)).auto_gpu_layers)
        assert len(asked) <= (7 if ctx == ctxs[0] else 3), (ctx, asked)
    monkeypatch.setattr(estimate, "most_layers_that_fit", real)
    assert autos == [estimate_fit(_fresh(llama70b), machine, FitRequest(ctx=ctx)).auto_gpu_layers for ctx in ctxs]


def test_a_kv_table_at_a_new_ctx_prices_each_layer_shape_once(llama70b, session_models, monkeypatch):
    """`kv.layer_kv_shapes`: a layer table at a new ctx (the fit's KV lower bound, the speed's split, each judged load's
    slots) prices each shape of layer once and repeats it — the 70B's 80 layers are one shape, gemma's sliding and
    full layers two — where every layer was priced (80 each, ~5 tables a tick); the tables are the per-layer ones."""
    priced: list[object] = []
    at = kv.LayerKV.at
    monkeypatch.setattr(kv.LayerKV, "at", lambda self, cells: priced.append(self) or at(self, cells))
    windows: list[object] = []
    swa_cells = SlotLayout.swa_cells
    monkeypatch.setattr(SlotLayout, "swa_cells", lambda self, *a: windows.append(a) or swa_cells(self, *a))
    layout = SlotLayout(4, False)
    for model, shapes in ((llama70b, 1), (session_models["gemma"], 2)):
        prices = kv.layer_kvs(model, KVType.F16)
        assert len(kv.layer_kv_shapes(model, KVType.F16)[0]) == shapes == len(set(prices))
        priced.clear()
        assert kv.layer_kv_table(model, 12_345, KVType.F16) == tuple(at(p, 12_345) for p in prices if p is not None)
        assert len(priced) == shapes
        windows.clear()
        table = slot_kv_table(model, 12_345, KVType.F16, layout, ubatch=512, swa_full=False)
        sliding = [p for p in prices if p is not None and p.cap is not None]
        assert len(windows) == len(set(sliding)) and len(table) == model.n_layer
        assert table == tuple(p.per_cell * (layout.ctx_seq(12_345) if p.cap is None else
                                            swa_cells(layout, 12_345, p.cap, 512)) * layout.streams
                              + p.fixed * layout.n_seq for p in prices if p is not None)


@pytest.fixture(scope="module")
def session_models(tmp_path_factory) -> dict[str, ModelSpec]:
    paths = write_models(tmp_path_factory.mktemp("session-models"))
    return {name: load_model(paths[name]) for name in ("llama", "gemma")}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["llama", "gemma"]), spec=st.sampled_from(["4x(500+200)*4", "7x(1500+20)", "2x(400+40)*3",
                                                                      "3000+1, 2x(40+4+1img)", "(1+0)*3"]),
       slots=st.sampled_from([SlotLayout(), SlotLayout(4, True), SlotLayout(4, False)]),
       slot_ctx=st.integers(1, 40_000), n_ctx=st.integers(1, 80_000), mib=st.sampled_from([-1, 0, 1, 20, 100, 400, 8192]),
       image=st.sampled_from([0, 256]))
def test_a_session_kept_by_what_it_tells_apart_is_the_one_replayed(session_models, name, spec, slots, slot_ctx, n_ctx,
                                                                   mib, image):
    """Rule 6 changes which replay is kept, never what it says: the one looked up equals a replay at the asked slot
    context, cells and cache limit themselves."""
    model = session_models[name]
    m = session.SessionModel(kv_type=KVType.F16, layout=slots, slot_ctx=slot_ctx, n_ctx=n_ctx, cache_ram_mib=mib,
                             checkpoints=CheckpointSettings(max_checkpoints=8), image_tokens=image)
    parsed = SessionSpec.parse(spec)
    assert session.replay(model, m, parsed) == session._replay(model, m, parsed)


def _span_walk(model: ModelSpec, sched: Scheduler, backend: int) -> int:
    """`options` Rule 3 as written: from the first of the backend's tensors' data to the end of its last, in file
    order (each tensor's data aligned to 32 bytes)."""
    held, offset = [], 0
    for t in model.tensors:
        if sched.weight_device(t.name) == backend:
            held.append((offset, offset + t.nbytes))
        offset += -(-t.nbytes // 32) * 32
    return held[-1][1] - held[0][0] if held else 0


def _scheduler(devices: tuple[int, ...]) -> Scheduler:
    """One GPU (backend 0) and the host (backend 1), layer slot i's weights on `devices[i]`."""
    return Scheduler(alignments=(256, 32), offload=(32, None), slot_device=devices, kv_device=devices[:-1])


def test_a_new_placements_mapped_span_looks_at_its_slots_not_its_tensors(llama70b, monkeypatch):
    """A tick that moves the GPU layers maps a new placement: the host's span walked the 70B's 724 tensors (a device
    asked of each) for every new split; with no `-ot` the span is the extent of the slots the backend holds."""
    llama70b = _fresh(llama70b)
    options.mapped_span(llama70b, _scheduler((0,) * 81), 1)
    splits = [_scheduler((1,) * (81 - gpu) + (0,) * gpu) for gpu in (10, 20, 30, 40, 80)]
    walked = [_span_walk(llama70b, sched, 1) for sched in splits]
    asked = _calls(monkeypatch, Scheduler, "slot_weight_device")
    assert [options.host_span(llama70b, sched) for sched in splits] == walked
    assert asked == []


@settings(max_examples=60, deadline=None)
@given(devices=st.lists(st.integers(0, 1), min_size=81, max_size=81), backend=st.integers(0, 1))
def test_the_slots_span_is_the_tensor_walks(llama70b, devices, backend):
    """`options` Rule 4 changes the work, never the span: for any placement of the slots, either backend."""
    sched = _scheduler(tuple(devices))
    assert options.mapped_span(llama70b, sched, backend) == _span_walk(llama70b, sched, backend)


def test_a_new_ctxs_graph_inputs_pick_no_blocks_again(llama70b, monkeypatch):
    """Every new ctx's full-context graph asks for its inputs (`input_bytes`), which read the blocks `replayed` picks
    (a hash of each of the 80 blocks' shapes); the blocks are the model's alone, picked once."""
    llama70b = _fresh(llama70b)
    settings_ = compute_graph.GraphSettings(ubatch=512, outputs=1, flash_attn=True, full_cells=4096, swa_cells=0,
                                            rot_k=0, rot_v=0)
    compute_graph.input_bytes(llama70b, settings_)
    picked = _calls(monkeypatch, compute_graph, "replayed")
    for ctx in NEW_CTXS:
        at = dataclasses.replace(settings_, full_cells=ctx)
        graph = compute_graph.compute_nodes(llama70b, at)
        assert compute_graph.input_bytes(llama70b, at) == sum(n.nbytes for n in graph if n.is_input)
    assert picked == []
