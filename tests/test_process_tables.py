"""The process's samplers and KV cells' metadata (`runtime_memory` Rules 11–12), worked out by hand on real GGUF files.

Sampler: 12 bytes (`llama_token_data`: id, logit, p) per vocabulary token, one per llama-server slot, one for
llama-completion. Cells: 52 bytes (pos 4 + ext 12 + shift 4 + a 256-bit sequence set 32) per cell of every KV
cache's streams; gemma3-style sliding layers add the window's cache.
"""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc, SSMDesc, write_gguf
from hypothesis import given, settings, strategies as st

from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_memory import KV_CELL_BYTES, TOKEN_DATA_BYTES
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime
from gguf_budget.core.fit.server.draft import DraftModel
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import fit_dict, fit_text
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

GiB = 1 << 30
BIG_HOST = hypothetical_machine(64 * GiB)
DENSE = ArchDesc(n_layer=2, n_embd=64, n_vocab=50_000)
# window 1024, period 6: layers 0-4 slide, 5 is full
GEMMA3 = ArchDesc(arch="gemma3", n_layer=6, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, sliding_window=1024,
                  n_vocab=30_000)
MAMBA = ArchDesc(arch="mamba", n_layer=2, ssm=SSMDesc())


def _fit(spec, ctx: int, runtime: Runtime = Runtime.LLAMA_SERVER, slots: int = 1, ubatch: int = 512, host=BIG_HOST,
         reserve: int | None = None):
    request = FitRequest(ctx=ctx, engine=EngineSettings(runtime=runtime, ubatch=ubatch),
                         server=ServerSettings(n_parallel=slots, cache_ram_mib=0),
                         **({"reserves": Reserves(host=reserve)} if reserve is not None else {}))
    return estimate_fit(spec, host, request)


def test_the_struct_sizes_are_llama_cpps():
    assert TOKEN_DATA_BYTES == 4 + 4 + 4  # llama_token (int32), logit (float), p (float)
    assert KV_CELL_BYTES == 4 + 3 * 4 + 4 + 256 // 8  # pos, ext {x, y, tok}, shift, std::bitset<LLAMA_MAX_SEQ>


SAMPLERS = [
    # runtime, -np, samplers held
    (Runtime.LLAMA_SERVER, 1, 1),
    (Runtime.LLAMA_SERVER, 4, 4),
    (Runtime.LLAMA_CLI, 3, 3),  # llama-cli runs llama-server in a thread
    (Runtime.LLAMA_COMPLETION, 4, 1),  # one sampler whatever the slots asked (it runs none)
    (Runtime.LLAMA_CPP_PYTHON, 1, 1),
]


@pytest.mark.parametrize(("runtime", "slots", "samplers"), SAMPLERS)
def test_each_program_holds_its_samplers(model, runtime, slots, samplers):
    fit = _fit(model(DENSE), 4096, runtime, slots)
    assert fit.devices[0].sampler == samplers * 12 * 50_000
    assert fit.memory.full.sampler == fit.memory.short.sampler == samplers * 12 * 50_000


CELLS = [
    # desc, ctx, -np, ubatch, cells
    (DENSE, 4096, 1, 512, 4096),
    (DENSE, 4000, 1, 512, 4096),  # n_ctx padded to 256
    (DENSE, 4096, 3, 512, 3 * 1536),  # three streams of 4096 / 3 = 1365 cells padded to 1536
    (GEMMA3, 8192, 1, 512, 8192 + 1536),  # the full cache and the window's: 1024 + 512 padded to 256
    (GEMMA3, 8192, 1, 256, 8192 + 1280),
    (GEMMA3, 1024, 1, 512, 1024 + 1024),  # the window's cache is never larger than the context
    (GEMMA3, 8192, 2, 512, 2 * 4096 + 2 * 1536),  # per stream
    (MAMBA, 8192, 1, 512, 0),  # recurrent state: no per-token cells
]


@pytest.mark.parametrize(("desc", "ctx", "slots", "ubatch", "cells"), CELLS)
def test_the_cells_metadata_is_52_bytes_a_cell_of_every_cache(model, desc, ctx, slots, ubatch, cells):
    fit = _fit(model(desc), ctx, slots=slots, ubatch=ubatch)
    assert fit.devices[0].kv_cells == 52 * cells
    assert fit.memory.full.kv_cells == 52 * cells
    if desc is DENSE:
        assert fit.kv.cells == cells  # the cells the KV cache's tensors hold


def test_the_verdict_counts_them_in_the_hosts_need(model):
    """A host of exactly the need fits; a byte less than the need with the samplers and cells does not."""
    spec = model(DENSE)
    fit = _fit(spec, 4096, slots=4)
    host = fit.devices[0]
    beside = host.sampler + host.kv_cells
    assert beside == 4 * 12 * 50_000 + 52 * 4 * 1024
    assert host.need == host.weights + host.kv + host.compute + host.server + beside
    assert _fit(spec, 4096, slots=4, host=hypothetical_machine(host.need), reserve=0).verdict.admitted
    assert not _fit(spec, 4096, slots=4, host=hypothetical_machine(host.need - 1), reserve=0).verdict.admitted


def test_both_ends_of_the_band_hold_them(model):
    fit = _fit(model(GEMMA3), 8192, slots=2)
    for r in (fit.memory.short, fit.memory.full):
        assert r.anonymous - r.sampler - r.kv_cells == (r.loaded_weights + r.repack + r.kv + r.output + r.compute
                                                        + r.work + r.checkpoints + r.process + r.server)
        assert (r.sampler, r.kv_cells) == (2 * 12 * 30_000, 52 * (2 * 4096 + 2 * 1536))


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("dense") / "dense.gguf", DENSE, "header_only")[0])


@settings(max_examples=25, deadline=None)
@given(slots=st.integers(1, 8), ctx=st.integers(256, 32768))
def test_a_slot_more_adds_one_sampler_and_the_cells_are_the_caches(dense, slots, ctx):
    """The cells follow the KV cache's own (a slot more may take cells away: each stream is padded to 256)."""
    one, more = _fit(dense, ctx, slots=slots), _fit(dense, ctx, slots=slots + 1)
    assert more.devices[0].sampler - one.devices[0].sampler == 12 * 50_000
    assert [f.devices[0].kv_cells for f in (one, more)] == [52 * f.kv.cells for f in (one, more)]


def test_fit_itemizes_them_in_text_and_json(model, gguf_file, capsys):
    """`fit`'s need rows, its JSON's host device and both ends of the band."""
    spec = model(DENSE)
    fit = _fit(spec, 4096, slots=4)
    text = fit_text(fit)
    assert "samplers 2.29 MiB + KV cells' metadata 208.00 KiB" in text  # 2,400,000 B; 212,992 B
    assert "a sampler each: 2.29 MiB in host RAM" in text  # the server's Slots row
    (host, *_) = fit_dict(fit)["devices"]
    assert (host["sampler"], host["kv_cells"]) == (2_400_000, 212_992)
    full = fit_dict(fit)["runtime_memory"]["full"]
    assert (full["sampler"], full["kv_cells"]) == (2_400_000, 212_992)
    path = gguf_file(DENSE, "header_only")
    assert main(["fit", str(path), "--ctx", "4096", "-np", "4", "--host-available", "8G", "--no-gpu", "--json"]) == 0
    (host, *_) = json.loads(capsys.readouterr().out)["devices"]
    assert (host["sampler"], host["kv_cells"]) == (2_400_000, 212_992)


def test_tune_says_what_of_the_hosts_memory_they_are(gguf_file, capsys):
    path = gguf_file(DENSE, "header_only")
    assert main(["tune", str(path), "--goal", "max-slots", "--min-ctx", "1024", "--host-available", "64M", "--host-reserve", "0",
                 "--no-gpu"]) == 0
    text = capsys.readouterr().out
    slots = int(text.split(" slots, ")[0].rsplit(" ", 1)[-1])  # 50: a sampler each is 44 % of the host's memory
    assert f"  host     of it samplers {human_bytes(slots * 12 * 50_000)} + KV cells' metadata" in text


def test_a_draft_holds_a_sampler_a_slot_and_its_own_cells(model):
    """The draft's context (common/speculative.cpp: one top-k sampler a sequence) counts in the host's need through
    llama-server's holdings, and in the band's server items."""
    spec = model(DENSE)
    plain = _fit(spec, 4096, slots=2)
    request = FitRequest(ctx=4096, server=ServerSettings(n_parallel=2, cache_ram_mib=0, draft=DraftModel(spec)))
    drafted = estimate_fit(spec, BIG_HOST, request)
    d = drafted.server.draft
    assert (d.sampler, d.kv_cells) == (2 * 12 * 50_000, 52 * 2 * 2048)
    host = drafted.devices[0]
    assert host.server == dict(d.weights)["host"] + dict(d.kv)["host"] + d.sampler + d.kv_cells
    assert drafted.memory.full.server - plain.memory.full.server >= d.sampler + d.kv_cells
    assert f"samplers {human_bytes(d.sampler)} + KV cells' metadata {human_bytes(d.kv_cells)} in host RAM" in \
        fit_text(drafted)
