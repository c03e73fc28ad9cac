"""A placement's compute buffers are replayed once per distinct graph (core/fit/buffers/placed_graph.py): a replay
kept by its signature is the placement's own, a search replays the scheduler once per distinct graph, not once per
step, and a load short before its compute buffers is judged without one (core/fit/placement/devices.py Rule 6)."""

from __future__ import annotations

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.fit import estimate as estimate_module
from gguf_budget.core.fit.buffers import placed_graph
from gguf_budget.core.fit.buffers.compute_graph import BLOCK_WEIGHTS, GLOBAL_WEIGHTS, GraphSettings, compute_nodes
from gguf_budget.core.fit.buffers.placed_graph import device_buffers, graph_key
from gguf_budget.core.fit.buffers.sched import Scheduler, compute_buffers
from gguf_budget.core.fit.estimate import fit_verdict
from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.model.catalogue import catalogue_path, find_entry

GiB = 1 << 30
N_LAYER = 12
HEAVY = {"ffn_down": T.Q6_K, "attn_v": T.Q6_K}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Blocks alike in shape, every third heavier (ffn_down and attn_v in Q6_K, as llama.cpp's Q4_K_M mixes them):
    a borrowed weight's copy, and whether a GPU with a tensor limit takes its product, differ with the block."""
    desc = ArchDesc(n_layer=N_LAYER, n_embd=256, n_ff=4096, n_head=8, n_head_kv=4, n_vocab=1024, weight_type=T.Q4_K,
                    layer_mix={il: HEAVY for il in range(2, N_LAYER, 3)})
    return load_model(write_gguf(tmp_path_factory.mktemp("mixed") / "m.gguf", desc, "header_only")[0])


@pytest.fixture(scope="module")
def alike(tmp_path_factory):
    desc = ArchDesc(n_layer=32, n_embd=256, n_ff=512, n_head=8, n_head_kv=4, n_vocab=1024)
    return load_model(write_gguf(tmp_path_factory.mktemp("alike") / "m.gguf", desc, "header_only")[0])


@st.composite
def machines(draw) -> list[Scheduler]:
    """Every placement of one machine and its options: slots start … L on the GPUs (one or two, the second taking all
    but the first `width` of them), the rest on the CPU; maybe `-nkvo`, an `-ot`, op offload off, a Vulkan-like
    tensor limit (between a light and a heavy ffn_down)."""
    gpus = draw(st.integers(1, 2))
    cpu = gpus
    kv_on_cpu = draw(st.booleans())
    ot = draw(st.sampled_from(((), ((r"blk\.(1|4)\.ffn_down", cpu),))))
    offload = (draw(st.sampled_from((32, None))),) * gpus + (None,)
    limit = (draw(st.sampled_from((None, 700_000))),) * gpus
    width = draw(st.integers(0, N_LAYER + 1)) if gpus == 2 else N_LAYER + 1
    out = []
    for start in range(N_LAYER + 2):
        slot = tuple(cpu if i < start else 0 if i < start + width else 1 for i in range(N_LAYER + 1))
        out.append(Scheduler(alignments=(256,) * gpus + (32,), offload=offload, slot_device=slot,
                             kv_device=tuple(cpu if kv_on_cpu else d for d in slot[:N_LAYER]), overrides=ot,
                             kv_on_cpu=kv_on_cpu, pin_norms=start == 0, max_tensor=limit))
    return out


graphs = st.builds(lambda ubatch, fa, cells: GraphSettings(ubatch=ubatch, outputs=1, flash_attn=fa, full_cells=cells,
                                                           swa_cells=0, rot_k=0, rot_v=0),
                   st.sampled_from((1, 32, 512)), st.booleans(), st.sampled_from((256, 4096)))


@settings(max_examples=30, deadline=None)
@given(gs=graphs, scheds=machines())
def test_a_kept_replay_is_the_placements_own(mixed, gs, scheds):
    """Whatever was replayed before, each placement's buffers are those of its own graph replayed afresh."""
    for sched in scheds:
        own = compute_buffers(compute_nodes(mixed, gs, graph_key(mixed, gs, sched).blocks, kv_on_cpu=sched.kv_on_cpu),
                              sched)
        assert device_buffers(mixed, gs, sched) == own


@pytest.fixture
def replays(monkeypatch):
    """The scheduler's replays made from here on, counted."""
    made = []
    real = placed_graph.compute_buffers

    def counting(nodes, sched):
        made.append(sched.slot_device)
        return real(nodes, sched)

    monkeypatch.setattr(placed_graph, "compute_buffers", counting)
    return made


def test_every_gpu_layer_count_of_a_model_of_alike_blocks_replays_a_few_graphs(alike, replays):
    """-ngl 0 … 33 of 32 alike blocks on a GPU that holds them all: each run of blocks keeps at most three (its first
    two and its last), so every -ngl that leaves three or more blocks on each side has one graph: 8 graphs for 34
    placements (34 replays before)."""
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=64 * GiB)
    for g in range(alike.n_layer + 2):
        estimate_fit(alike, machine, FitRequest(ctx=4096, gpu_layers=g))
    assert len(replays) <= 8


def test_a_verdict_on_weights_the_gpu_cannot_hold_replays_nothing(alike, replays):
    """Every layer asked on a GPU smaller than the weights: short before any compute buffer (devices Rule 6); a ctx
    no other test prices, so no kept replay answers (one replay before)."""
    small = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=GiB // 64)
    every = FitRequest(ctx=2048, gpu_layers=alike.n_layer + 1)
    assert fit_verdict(alike, small, every) is FitVerdict.DOES_NOT_FIT
    assert replays == []
    reported = estimate_fit(alike, small, every)
    assert reported.verdict is FitVerdict.DOES_NOT_FIT and reported.devices[1].compute  # a reported load is priced


@pytest.mark.parametrize("name", ["llama-3.1-8b-instruct", "qwen3-30b-a3b-instruct-2507", "gemma-3-4b-it", "phi-4",
                                  "gpt-oss-20b", "deepseek-v2-lite", "granite-4.0-h-tiny", "llama-4-scout-17b-16e-instruct"])
def test_every_weight_the_graph_reads_is_one_the_key_names(name):
    """Rule 2 keys `-ot`'s moves by BLOCK_WEIGHTS and GLOBAL_WEIGHTS: a weight the graph read beyond them could move
    unseen."""
    model = load_model(catalogue_path(find_entry(name)))
    gs = GraphSettings(ubatch=512, outputs=1, flash_attn=False, full_cells=4096, swa_cells=1024, rot_k=64, rot_v=64)
    read = {(n.layer is None, n.weight if n.layer is None else n.weight.split(".", 2)[2].removesuffix(".weight"))
            for n in compute_nodes(model, gs) if n.weight is not None}
    assert read and read <= {(True, w) for w in GLOBAL_WEIGHTS} | {(False, w) for w in BLOCK_WEIGHTS}


@pytest.mark.parametrize("ctx", [4_352, 20_736, 71_168])
def test_the_automatic_gpu_layers_on_one_gpu_price_a_compute_buffer_or_three(monkeypatch, ctx):
    """gpu_split Rule 5: on one GPU the search asks first the most layers whose weights and cache fit before any compute
    buffer, then goes down from there: at most three placements priced with their compute buffers, the report's
    included (by bisection over the 81 slots of a 70B: 5–7), and the answer is the largest g that fits, as the g above it says."""
    priced = []
    real = estimate_module.device_computes
    monkeypatch.setattr(estimate_module, "device_computes", lambda *a, **k: priced.append(1) or real(*a, **k))
    model = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))
    machine = hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB)
    estimate = estimate_fit(model, machine, FitRequest(ctx=ctx))
    auto = estimate.auto_gpu_layers
    assert auto is not None and 0 < auto < model.n_layer + 1 and len(priced) <= 3  # the answer's own report included
    assert fit_verdict(model, machine, FitRequest(ctx=ctx, gpu_layers=auto)).admitted
    assert not fit_verdict(model, machine, FitRequest(ctx=ctx, gpu_layers=auto + 1)).admitted
