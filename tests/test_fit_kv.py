"""The KV bound and llama.cpp's allocation, worked out by hand for five kinds of model.

Per cell and layer, f16: n_head_kv · (k_dim + v_dim) · 2 bytes. Engine: ctx padded to 256
cells; sliding layers hold min(padded ctx, window + 512); recurrent layers a fixed F32 state.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf_factory import ArchDesc, MLADesc, SSMDesc

from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import (
    LayerKV,
    engine_cells,
    engine_kv_breakdown,
    kv_breakdown,
    kv_price,
    layer_kv,
    layer_kv_table,
)
from gguf_budget.core.model.spec import LayerAttention, LayerKind

GiB = 1024**3
BIG_HOST = hypothetical_machine(64 * GiB)

# 4 layers, 2 KV heads of 256/8 = 32 dims: 2 · (32 + 32) · 2 = 256 bytes per cell and layer
DENSE = ArchDesc(n_layer=4, n_embd=256, n_head=8, n_head_kv=2)
# gemma3: window 1024, period 6 → layers 0-4 and 6-10 slide, 5 and 11 are full;
# 1 KV head of 64 dims: 1 · (64 + 64) · 2 = 256 bytes per cell and layer
GEMMA3 = ArchDesc(arch="gemma3", n_layer=12, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, sliding_window=1024)
# jamba-style hybrid: head_count_kv 0 marks the recurrent layers 0, 1, 3; layer 2 attends with
# 2 KV heads of 16 dims (128 bytes per cell). State per recurrent layer, F32:
# ((d_conv − 1) · d_inner + d_state · d_inner) · 4 = (3 · 128 + 16 · 128) · 4 = 9728 bytes
HYBRID = ArchDesc(arch="jamba", n_layer=4, n_head_kv=(0, 0, 2, 0), ssm=SSMDesc(), recurrent_layers=(0, 1, 3))
# mamba: every layer recurrent, 3 · 9728 bytes whatever the context
MAMBA = ArchDesc(arch="mamba", n_layer=3, ssm=SSMDesc())
# deepseek2 MLA as converted since llama.cpp PR 12801: one latent row of kv_lora_rank 64 + rope 32 = 96 elements,
# K only, f16: 192 bytes
MLA = ArchDesc(arch="deepseek2", n_layer=2, mla=MLADesc(kv_lora_rank=64, rope_dim=32, absorbed=True))
# the same model as older converters wrote it (no key_length_mla): every head's K (96) and V (64), 4 heads, f16:
# 4 · (96 + 64) · 2 = 1280 bytes
MLA_OLD = ArchDesc(arch="deepseek2", n_layer=2, n_head_kv=4, mla=MLADesc(kv_lora_rank=64, rope_dim=32))

KV_TABLE = [
    # desc, ctx, kv type, FP16 lower bound (unpadded), engine, attention, sliding, recurrent, state
    (DENSE, 1000, "f16", 1000 * 4 * 256, 1024 * 4 * 256, 4, 0, 0, 0),
    (DENSE, 1024, "f16", 1024 * 4 * 256, 1024 * 4 * 256, 4, 0, 0, 0),
    (DENSE, 1000, "f32", 1000 * 4 * 256, 1024 * 4 * 512, 4, 0, 0, 0),
    (DENSE, 1000, "q8_0", 1000 * 4 * 256, 1024 * 4 * (2 * 34 + 2 * 34), 4, 0, 0, 0),  # 64 elements = 2 blocks
    (DENSE, 1000, "q4_0", 1000 * 4 * 256, 1024 * 4 * (2 * 18 + 2 * 18), 4, 0, 0, 0),
    (GEMMA3, 8192, "f16", 2 * 8192 * 256 + 10 * 1024 * 256, 2 * 8192 * 256 + 10 * 1536 * 256, 12, 10, 0, 0),
    (GEMMA3, 1000, "f16", 12 * 1000 * 256, 12 * 1024 * 256, 12, 10, 0, 0),
    (HYBRID, 1000, "f16", 1000 * 128, 1024 * 128 + 3 * 9728, 1, 0, 3, 3 * 9728),
    (MAMBA, 1000, "f16", 0, 3 * 9728, 0, 0, 3, 3 * 9728),
    (MAMBA, 100000, "f16", 0, 3 * 9728, 0, 0, 3, 3 * 9728),
    (MLA, 1000, "f16", 2 * 1000 * 192, 2 * 1024 * 192, 2, 0, 0, 0),
    (MLA, 1000, "q8_0", 2 * 1000 * 192, 2 * 1024 * 3 * 34, 2, 0, 0, 0),  # 96 elements = 3 blocks
    (MLA_OLD, 1000, "f16", 2 * 1000 * 1280, 2 * 1024 * 1280, 2, 0, 0, 0),
    (MLA_OLD, 1000, "q8_0", 2 * 1000 * 1280, 2 * 1024 * (12 + 8) * 34, 2, 0, 0, 0),  # K 384, V 256 elements
]


@pytest.mark.parametrize(("desc", "ctx", "kv_type", "bound", "engine", "n_attn", "n_swa", "n_rec", "state"), KV_TABLE)
def test_kv_bound_and_engine_by_hand(model, desc, ctx, kv_type, bound, engine, n_attn, n_swa, n_rec, state):
    spec = model(desc)
    kv = estimate_fit(spec, BIG_HOST, FitRequest(ctx=ctx, kv_type=kv_type)).kv
    assert (kv.lower_bound, kv.engine) == (bound, engine)
    assert (kv.attention_layers, kv.swa_layers, kv.recurrent_layers, kv.recurrent_state) == (n_attn, n_swa, n_rec, state)
    assert engine_kv_breakdown(spec, ctx, kv_type).total == engine
    assert (kv.cells, kv.host, kv.gpu) == (engine_cells(ctx), engine, 0)


@pytest.mark.parametrize(("ctx", "cells"), [(1, 256), (256, 256), (257, 512), (4096, 4096), (131072, 131072)])
def test_the_engine_pads_the_context_to_256_cells(ctx, cells):
    assert engine_cells(ctx) == cells


def test_kv_follows_its_layer_onto_the_gpu(model):
    spec = model(DENSE)
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=8 * GiB)
    kv = estimate_fit(spec, machine, FitRequest(ctx=1000, gpu_layers=2)).kv  # the output layer and block 3
    assert (kv.gpu, kv.host) == (1024 * 256, 3 * 1024 * 256)
    assert estimate_fit(spec, machine, FitRequest(ctx=1000, gpu_layers=1)).kv.gpu == 0  # the output layer has no KV


def test_missing_head_facts_make_the_kv_unknown_not_zero(model):
    """A file without `head_count_kv` facts: the spec's layers are "unknown" (as model_facts builds them)."""
    spec = model(DENSE)
    blind = replace(spec, layers=tuple(LayerAttention("unknown", 8, None, 32, 32) for _ in spec.layers),
                    unknown=("n_head_kv",))
    e = estimate_fit(blind, BIG_HOST, FitRequest(ctx=1000))
    assert (e.kv.lower_bound, e.kv.engine, e.kv.host, e.auto_gpu_layers, e.verdict) == (None, None, None, None, "unknown")
    assert e.unknowns == ("KV cache of 4 layer(s): the file lacks n_head_kv",)


def test_missing_recurrent_sizes_make_the_state_unknown(model):
    spec = replace(model(HYBRID), recurrent_state_bytes=None)
    e = estimate_fit(spec, BIG_HOST, FitRequest(ctx=1000))
    assert (e.kv.lower_bound, e.kv.recurrent_state, e.kv.engine, e.verdict) == (1000 * 128, None, None, "unknown")
    assert e.unknowns == ("recurrent state: the file lacks the SSM/RWKV state sizes",)


LAYER_KV_TABLE = [
    # layer, kv type, recurrent state, swa_extra → per cell, cap, fixed (None: unknown)
    (LayerAttention("full", 8, 2, 32, 32), "f16", None, 0, (2 * (32 + 32) * 2, None, 0)),
    (LayerAttention("full", 8, 2, 32, 32), "q8_0", None, 0, (2 * 34 + 2 * 34, None, 0)),  # 64 elements: 2 blocks
    (LayerAttention("swa", 8, 1, 64, 64, 1024), "f16", None, 0, (256, 1024, 0)),
    (LayerAttention("swa", 8, 1, 64, 64, 1024), "f16", None, 512, (256, 1536, 0)),
    (LayerAttention("full", 4, 1, 96, 0), "f16", None, 0, (192, None, 0)),  # MLA: one latent row
    (LayerAttention("recurrent", 4, 0, 0, 0), "f16", 9728, 512, (0, None, 9728)),
    (LayerAttention("recurrent", 4, 0, 0, 0), "f16", None, 0, None),
    (LayerAttention("unknown", 8, None, 32, 32), "f16", 9728, 0, None),
]


@pytest.mark.parametrize(("layer", "kv_type", "state", "extra", "expected"), LAYER_KV_TABLE)
def test_one_rule_prices_each_kind_of_layer(layer, kv_type, state, extra, expected):
    assert layer_kv(layer, kv_type, state, swa_extra=extra) == (None if expected is None else LayerKV(*expected))


def test_a_layer_holds_at_most_its_cap():
    price = LayerKV(per_cell=256, cap=1024, fixed=8)
    assert [price.at(c) for c in (0, 1000, 1024, 5000)] == [8, 256 * 1000 + 8, 256 * 1024 + 8, 256 * 1024 + 8]


@pytest.mark.parametrize("desc", [DENSE, GEMMA3, HYBRID, MAMBA, MLA, MLA_OLD],
                         ids=["dense", "gemma3", "hybrid", "mamba", "mla", "mla-old"])
@pytest.mark.parametrize("kv_type", ["f16", "q8_0"])
@pytest.mark.parametrize("swa_extra", [0, 512])
def test_breakdown_price_and_table_are_sums_of_the_layer_rule(model, desc, kv_type, swa_extra):
    spec = model(desc)
    for ctx in (1, 1000, 1536, 100000):
        each = [layer_kv(layer, kv_type, spec.recurrent_state_bytes, swa_extra=swa_extra) for layer in spec.layers]
        table = layer_kv_table(spec, ctx, kv_type, swa_extra=swa_extra)
        assert table == tuple(p.at(ctx) for p in each)
        assert kv_breakdown(spec, ctx, kv_type, swa_extra=swa_extra).total == sum(table)
        assert kv_price(spec, kv_type, swa_extra=swa_extra).at(ctx) == sum(table)
        attention = sum(b for b, layer in zip(table, spec.layers, strict=True) if layer.kind is not LayerKind.RECURRENT)
        assert kv_breakdown(spec, ctx, kv_type, swa_extra=swa_extra).attention == attention
