"""Properties of the fit estimate over random machines: the auto split is the largest that fits,
bytes are conserved, and more memory never makes a verdict worse — for every kind of model:
dense (with an "other" global), sliding window, MoE with MLA, hybrid and pure recurrent."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, MLADesc, SSMDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.snapshot import GpuInfo, HardwareSnapshot

MiB = 1024**2
# 12 blocks of uneven size (every third one F32-heavy) and a large output layer
DESC = ArchDesc(n_layer=12, n_embd=128, n_ff=256, n_vocab=4096, layer_mix={i: {"ffn_up": T.F32} for i in range(0, 12, 3)})
ATTENTION_EVERY_4TH = [0 if il % 4 else 2 for il in range(12)]
FAMILIES = {
    "dense": replace(DESC, rope_freqs=64),  # rope_freqs: an "other" global, loaded with the output layer
    "sliding": replace(DESC, arch="gemma2", sliding_window=512),
    "moe-mla": replace(DESC, arch="deepseek2", mla=MLADesc(), n_expert=4, n_expert_used=2, expert_ff=64),
    "hybrid": replace(DESC, arch="jamba", ssm=SSMDesc(), n_head_kv=ATTENTION_EVERY_4TH,
                      recurrent_layers=tuple(il for il, kv in enumerate(ATTENTION_EVERY_4TH) if kv == 0)),
    "recurrent": replace(DESC, arch="mamba", ssm=SSMDesc(), n_head=0, n_head_kv=0, layer_mix={}),
}


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fit")
    return {name: load_model(write_gguf(folder / f"{name}.gguf", desc, "header_only")[0])
            for name, desc in FAMILIES.items()}


family_st = st.sampled_from(sorted(FAMILIES))


def machine(host: int, frees: list[int]) -> HardwareSnapshot:
    gpus = tuple(GpuInfo(index=i, name="gpu", total=256 * MiB, free=f, used=256 * MiB - f) for i, f in enumerate(frees))
    return HardwareSnapshot(captured_at=0.0, host_total=64 * 1024 * MiB, host_available=host, cgroup_limit=None,
                            gpus=gpus, gpu_error=None, source="hypothetical")


frees_st = st.lists(st.integers(0, 64 * MiB), min_size=0, max_size=4)
ctx_st = st.integers(1, 8192)


@settings(max_examples=60, deadline=None)
@given(family=family_st, frees=st.lists(st.integers(0, 64 * MiB), min_size=1, max_size=4), ctx=ctx_st)
def test_auto_is_the_largest_g_where_every_gpu_fits(specs, family, frees, ctx):
    spec = specs[family]
    snap = machine(64 * 1024 * MiB, frees)
    e = estimate_fit(spec, snap, FitRequest(ctx=ctx))
    # g = 0 counts as the floor even where a GPU cannot hold the compute buffer of its op offload (the verdict says so)
    assert all(d.shortfall == 0 for d in e.devices[1:]) or e.auto_gpu_layers == 0
    for g in range(e.auto_gpu_layers + 1, spec.n_layer + 2):
        assert any(d.shortfall for d in estimate_fit(spec, snap, FitRequest(ctx=ctx, gpu_layers=g)).devices[1:])


@settings(max_examples=60, deadline=None)
@given(family=family_st, frees=frees_st, ctx=ctx_st, g=st.integers(0, 14))
def test_bytes_are_conserved_across_devices(specs, family, frees, ctx, g):
    spec = specs[family]
    e = estimate_fit(spec, machine(64 * 1024 * MiB, frees), FitRequest(ctx=ctx, gpu_layers=g))
    assert e.weights.gpu_exact + e.weights.host_exact == spec.tensor_bytes
    assert e.weights.gpu_coarse + e.weights.host_coarse == e.weights.file_bytes
    assert sum(d.weights for d in e.devices) == spec.tensor_bytes
    assert sum(d.kv for d in e.devices) == e.kv.engine == e.kv.gpu + e.kv.host
    assert e.kv.lower_bound <= e.kv.engine


RANK = {"does_not_fit": 0, "cpu_only": 1, "fits_split": 2, "fits_gpu": 3}


@settings(max_examples=60, deadline=None)
@given(free=st.integers(0, 64 * MiB), extra=st.integers(0, 64 * MiB), host=st.integers(0, 8 * 1024 * MiB),
       ctx=ctx_st, family=family_st)
def test_more_memory_never_makes_the_verdict_worse(specs, free, extra, host, ctx, family):
    spec = specs[family]
    small = estimate_fit(spec, machine(host, [free]), FitRequest(ctx=ctx))
    large = estimate_fit(spec, machine(host + extra, [free + extra]), FitRequest(ctx=ctx))
    assert RANK[large.verdict] >= RANK[small.verdict]
    assert large.auto_gpu_layers >= small.auto_gpu_layers
