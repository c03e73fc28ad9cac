"""llama-server's rules as the core reads them: slots and KV sharing, context checkpoints, the prompt cache,
the verdict they change, and the command that carries them (parsed back to the same load)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from arch_strategies import arch_descs
from command_parse import parse_llama_server, server_settings
from gguf_factory import ArchDesc, ProjectorDesc, write_gguf, write_projector
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.server.draft import DraftModel
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.server.projector import read_projector
from gguf_budget.core.fit.server.prompt_cache import DEFAULT_CACHE_RAM_MIB, chosen_cache_ram_mib
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.server.slots import SlotLayout, resolve_slots, slot_kv_table
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import engine_layer_kv_table

MiB = 1024**2
GiB = 1024**3
NO_RESERVE = Reserves(0, 0)


def test_automatic_slots_are_four_sharing_one_cache_and_an_explicit_count_splits_it():
    assert resolve_slots(None, None) == SlotLayout(4, True)
    assert resolve_slots(None, False) == SlotLayout(4, False)
    assert resolve_slots(4, None) == SlotLayout(4, False)
    assert resolve_slots(2, True) == SlotLayout(2, True)
    with pytest.raises(RequestError):
        ServerSettings(n_parallel=0)  # llama-server refuses -np 0


def test_a_split_context_pads_each_slot_and_rounds_the_whole_as_llama_cpp_does():
    # -c 8192 -np 3: 8192 / 3 = 2730 → 2816 cells a slot, n_ctx 8448 (the recorded gemma3 run printed 2816 cells, 3/3 seqs)
    split = SlotLayout(3, False)
    assert (split.ctx_seq(8192), split.total_cells(8192), split.slot_ctx(8192, 32768)) == (2816, 8448, 2816)
    unified = SlotLayout(4, True)
    assert (unified.ctx_seq(8192), unified.total_cells(8192), unified.slot_ctx(8192, 4096)) == (8192, 8192, 4096)
    # sliding layers: window × 4 + ubatch cells when unified (512 · 4 + 512 = 2560), window + ubatch a stream otherwise
    assert unified.swa_cells(8192, 512, 512) == 2560 and split.swa_cells(8192, 512, 512) == 1024
    # the reserved graph's tokens are a multiple of the sequences: 512 → 513 for 3
    assert split.reserve_tokens(8192, 512) == 513 and unified.reserve_tokens(8192, 512) == 512


@settings(max_examples=40, deadline=None)
@given(desc=arch_descs(), ctx=st.integers(1, 20_000), ubatch=st.sampled_from((64, 512)), swa_full=st.booleans())
def test_one_slot_prices_the_kv_cache_as_the_single_sequence_rule(desc, ctx, ubatch, swa_full):
    with tempfile.TemporaryDirectory() as tmp:
        spec = load_model(write_gguf(Path(tmp) / "m.gguf", desc, "header_only")[0])
    for layout in (SlotLayout(1, False), SlotLayout(1, True)):
        assert slot_kv_table(spec, ctx, "f16", layout, ubatch=ubatch, swa_full=swa_full) == \
            engine_layer_kv_table(spec, ctx, "f16", ubatch=ubatch, swa_full=swa_full)


@settings(max_examples=40, deadline=None)
@given(desc=arch_descs(("dense", "swa", "recurrent")), ctx=st.integers(256, 20_000), n=st.integers(1, 8))
def test_unified_slots_hold_the_full_layers_once_and_more_sliding_and_recurrent_state(desc, ctx, n):
    with tempfile.TemporaryDirectory() as tmp:
        spec = load_model(write_gguf(Path(tmp) / "m.gguf", desc, "header_only")[0])
    one = slot_kv_table(spec, ctx, "f16", SlotLayout(1), ubatch=512, swa_full=False)
    shared = slot_kv_table(spec, ctx, "f16", SlotLayout(n, True), ubatch=512, swa_full=False)
    for layer, a, b in zip(spec.layers, one, shared, strict=True):
        if layer.kind == "full":
            assert a == b
        else:
            assert a is None or b is None or a <= b


def test_a_slot_keeps_full_checkpoints_of_its_window_and_a_dense_model_none(model):
    dense = model(ArchDesc(n_layer=2))
    machine = hypothetical_machine(16 * GiB)
    assert estimate_fit(dense, machine, FitRequest(ctx=4096)).server.checkpoints == 0
    swa = model(ArchDesc(arch="gemma3", n_layer=6, n_head=4, n_head_kv=1, head_dim=256, sliding_window=512,
                         qk_norm=True, post_norms=True, tied=True))
    # 5 sliding layers × 512 cells × (K + V rows of 1 head × 256 f16) + headers; the recorded gemma3 run: 7.506 MiB
    one = 16 + 12 * 512 + 8 + 5 * 24 + 512 * 5 * 2 * 256 * 2
    s = estimate_fit(swa, machine, FitRequest(ctx=4096, server=ServerSettings(n_parallel=3))).server
    assert s.checkpoint == one + 4 * 2 and s.checkpoints == s.checkpoint * 32 * 3  # 3 streams: two more cell counts
    assert estimate_fit(swa, machine, FitRequest(ctx=4096, server=ServerSettings(ctx_checkpoints=0))).server.checkpoints == 0


def test_the_cache_the_tool_sizes_holds_one_context_and_never_more_than_the_host_has_left():
    assert chosen_cache_ram_mib(90 * MiB, 10 * GiB) == 90
    assert chosen_cache_ram_mib(90 * MiB + 1, 10 * GiB) == 91
    assert chosen_cache_ram_mib(100 * GiB, 100 * GiB) == DEFAULT_CACHE_RAM_MIB
    assert chosen_cache_ram_mib(90 * MiB, 40 * MiB + 5) == 40
    assert chosen_cache_ram_mib(90 * MiB, -1) == 0
    for bad in (-2, 2**31):
        with pytest.raises(RequestError):
            ServerSettings(cache_ram_mib=bad)


@settings(max_examples=60, deadline=None)
@given(host=st.integers(1, 64 * 1024).map(lambda m: m * MiB), ctx=st.integers(256, 8192))
def test_a_cache_the_person_did_not_size_never_turns_a_fit_into_a_misfit(spec_dense, host, ctx):
    machine = hypothetical_machine(host)
    off = estimate_fit(spec_dense, machine, FitRequest(ctx=ctx, reserves=NO_RESERVE,
                                                       server=ServerSettings(cache_ram_mib=0, worst_case=True)))
    chosen = estimate_fit(spec_dense, machine, FitRequest(ctx=ctx, reserves=NO_RESERVE,
                                                          server=ServerSettings(worst_case=True)))
    assert chosen.verdict == off.verdict
    host_load = chosen.devices[0]
    assert host_load.server == chosen.server.prompt_cache
    if chosen.verdict.admitted:
        assert host_load.need <= host_load.usable


def test_a_sized_cache_is_counted_full_and_can_turn_the_verdict(spec_dense):
    base = estimate_fit(spec_dense, hypothetical_machine(GiB), FitRequest(ctx=2048, reserves=NO_RESERVE))
    assert base.verdict == "cpu_only"
    two = estimate_fit(spec_dense, hypothetical_machine(GiB),
                       FitRequest(ctx=2048, reserves=NO_RESERVE, server=ServerSettings(cache_ram_mib=2048,
                                                                                       worst_case=True)))
    assert two.verdict == "does_not_fit" and two.devices[0].server == 2 * GiB
    assert two.shortfall["host"] == two.devices[0].need - GiB


@pytest.fixture(scope="module")
def spec_dense(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("srv") / "m.gguf", ArchDesc(n_layer=4, n_vocab=512),
                                 "header_only")[0])


def test_the_printed_command_parses_back_to_the_same_load(tmp_path):
    text = ArchDesc(n_layer=4, n_embd=128, tokens=300)
    path = write_gguf(tmp_path / "my model.gguf", text)[0]
    spec = load_model(path)
    projector = read_projector(str(write_projector(tmp_path / "mm proj.gguf", ProjectorDesc(text_embd=128))))
    draft = DraftModel(load_model(write_gguf(tmp_path / "draft.gguf", replace(text, n_layer=2))[0]), gpu_layers=2,
                       kv_type="q8_0")
    machine = hypothetical_machine(16 * GiB, gpu_count=1, gpu_total=8 * GiB)
    for server in (ServerSettings(n_parallel=None, projector=projector, draft=draft),
                   ServerSettings(n_parallel=3, cache_ram_mib=512, ctx_checkpoints=4, projector=projector,
                                  projector_offload=False),
                   ServerSettings(n_parallel=2, kv_unified=True, cache_ram_mib=-1,
                                  draft=replace(draft, on_gpu=False))):
        e = estimate_fit(spec, machine, FitRequest(ctx=4096, server=server))
        back = parse_llama_server(e.command.shell)
        assert back.spec_type == ("draft-simple" if server.draft else None)
        files = {"projector": projector if back.mmproj else None,
                 "draft": None if back.draft is None else DraftModel(
                     draft.spec, int(back.draft_gpu_layers), back.draft_device != "none", back.draft_cache_k)}
        assert (back.mmproj is not None, back.draft is not None) == (server.projector is not None, server.draft is not None)
        again = estimate_fit(spec, machine, FitRequest(ctx=back.ctx, gpu_layers=back.gpu_layers,
                                                       server=server_settings(back, **files)))
        assert again.devices == e.devices and again.server.layout == e.server.layout
        assert again.server.cache_ram_mib == e.server.cache_ram_mib


def test_a_projector_and_a_draft_take_their_gpu_before_the_model_and_stay_home_when_asked(tmp_path):
    text = ArchDesc(n_layer=8, n_embd=256, n_ff=512, tokens=300)
    spec = load_model(write_gguf(tmp_path / "m.gguf", text, "header_only")[0])
    projector = read_projector(str(write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=256))))
    draft = DraftModel(load_model(write_gguf(tmp_path / "d.gguf", replace(text, n_layer=2), "header_only")[0]))
    plain = estimate_fit(spec, hypothetical_machine(16 * GiB), FitRequest(ctx=2048))
    # a GPU that holds the whole model (every weight, its KV and the compute buffer it reserves with every layer
    # offloaded) beside its 1.5 GiB reserve, and little more
    roomy = estimate_fit(spec, hypothetical_machine(16 * GiB, gpu_count=1, gpu_total=16 * GiB), FitRequest(ctx=2048))
    machine = hypothetical_machine(16 * GiB, gpu_count=1, gpu_total=1536 * MiB + plain.weights.host_exact
                                   + (plain.kv.engine or 0) + roomy.devices[1].compute)
    alone = estimate_fit(spec, machine, FitRequest(ctx=2048))
    assert alone.verdict == "fits_gpu"
    for server in (ServerSettings(projector=projector), ServerSettings(draft=draft)):
        e = estimate_fit(spec, machine, FitRequest(ctx=2048, server=server))
        gpu = e.devices[1]
        assert gpu.server > 0 and gpu.need <= gpu.usable  # held first: the model's layers get what is left
        assert e.gpu_layers < alone.gpu_layers
    home = estimate_fit(spec, machine, FitRequest(ctx=2048, server=ServerSettings(
        projector=projector, projector_offload=False, draft=replace(draft, on_gpu=False))))
    assert home.devices[1].server == 0 and home.gpu_layers == alone.gpu_layers
    assert home.server.projector.device == "host" and home.server.draft.gpu_layers == 0
    assert "--no-mmproj-offload" in home.command.argv and "none" in home.command.argv
