"""The caches a slider tick leans on are kept per model object (core/model/per_model_cache.py): a model opened again
is never compared field by field with the one kept, one object finds its own results, and a ctx tick walks no
model's tensor list again (the block shapes and the CPU matmul need of every layer split are kept per model)."""

from __future__ import annotations

import dataclasses

import pytest

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.fit.ctx.auto_ctx import auto_fit, largest_ctx
from gguf_budget.core.fit.buffers import flash_attn_support
from gguf_budget.core.fit.buffers.cpu_work import _matmul, matmul_work
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.resources import resource_path

SEVENTY_B = resource_path("catalogue/llama-3.1-70b-instruct-q4_k_m.skeleton.gguf")


def test_a_model_opened_again_is_never_compared_field_by_field(monkeypatch):
    first, again = load_model(str(SEVENTY_B)), load_model(str(SEVENTY_B))
    assert first == again and first is not again
    machine = hypothetical_machine(128 << 30, gpu_count=1, gpu_total=24 << 30)
    for model in (first, again):
        choice = auto_fit(model, machine, FitRequest(ctx=8192))
        largest_ctx(model, machine, choice)
    compared = []
    original = FrozenMap.__eq__

    def counted(self, other):
        compared.append(1)
        return original(self, other)

    monkeypatch.setattr(FrozenMap, "__eq__", counted)
    for ctx in (8192, 16384, 32768):  # what a ctx tick asks: every cache of the reopened model, hit or not
        choice = auto_fit(again, machine, FitRequest(ctx=ctx))
        largest_ctx(again, machine, choice)
        estimate_fit(again, machine, FitRequest(ctx=ctx))
    assert compared == []


def test_one_object_finds_its_own_results_and_an_equal_one_its_own():
    calls = []

    @per_model(maxsize=4)
    def layers(model, extra: int) -> int:
        calls.append(model)
        return model.n_layer + extra

    first, again = load_model(str(SEVENTY_B)), load_model(str(SEVENTY_B))
    assert layers(first, 1) == layers(first, 1) == 81 and calls == [first]
    assert layers(again, 1) == 81 and len(calls) == 2 and calls[1] is again
    with pytest.raises(TypeError):
        layers(first, 1, 2)


def _walked_matmul_work(model, host_layers, rows, outputs, threads, repacked):
    """The CPU matmul need as the rule says it, one tensor at a time (the old walk)."""
    used = model.expert_used_count or 1
    need = 0
    for t in model.tensors:
        if len(t.shape) < 2 or t.name.startswith(("token_embd.", "position_embd.", "per_layer_token_embd.")):
            continue
        if t.layer is None:
            n = outputs
        elif t.layer < host_layers:
            n = rows
        else:
            continue
        need = max(need, _matmul(t, n, threads, t.name in repacked, used))
    return need


@pytest.mark.parametrize("name", ["llama-3.1-70b-instruct-q4_k_m", "qwen3-30b-a3b-instruct-2507-q4_k_m",
                                  "gemma-3-4b-it-q4_k_m", "gpt-oss-20b-mxfp4_moe"])
def test_the_matmul_need_of_every_split_is_the_walk_of_its_layers(name):
    model = load_model(str(resource_path(f"catalogue/{name}.skeleton.gguf")))
    repacked = frozenset(t.name for t in model.tensors[::7])
    for rows, outputs in ((512, 1), (1, 1), (2048, 2048)):
        for host_layers in range(-1, model.n_layer + 3):
            assert matmul_work(model, host_layers, rows, outputs, 2, repacked) == \
                _walked_matmul_work(model, host_layers, rows, outputs, 2, repacked), (rows, host_layers)


class _CountedTensors(tuple):
    """The model's tensors, counting every walk over them."""

    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def test_a_ctx_tick_walks_no_tensor_list_again():
    model = load_model(str(SEVENTY_B))
    counted = dataclasses.replace(model, tensors=_CountedTensors(model.tensors))
    machine = hypothetical_machine(128 << 30, gpu_count=1, gpu_total=24 << 30)
    estimate_fit(counted, machine, FitRequest(ctx=4096))
    before = _CountedTensors.walks
    for ctx in (8192, 12288, 16384, 40960, 65536):  # new ctxs, new GPU splits: the graph and the CPU work re-priced
        estimate_fit(counted, machine, FitRequest(ctx=ctx))
    assert _CountedTensors.walks == before


def test_a_ctx_tick_reads_no_layers_attention_shapes_or_experts_again(monkeypatch):
    """Each placement a search prices asked every layer's attention shape (`flash_attn_support.attention_shapes`) and
    each block's routed experts (`moe`) again, at every ctx: ~7 and ~9 walks of the 80 layers an estimate. They
    depend on the model (and the cache types) alone, so a new ctx reads neither again; nor the "has it routed experts"
    test (`ModelSpec.routed_expert_bytes`, asked twice an estimate: summed once and kept, `spec` Rule 4)."""
    model = load_model(str(SEVENTY_B))
    counted = dataclasses.replace(model)
    object.__setattr__(counted, "layer_role_bytes", _CountedTensors(model.layer_role_bytes))
    shapes = []
    real = flash_attn_support.block_shapes
    monkeypatch.setattr(flash_attn_support, "block_shapes", lambda m: (shapes.append(m), real(m))[1])
    machine = hypothetical_machine(128 << 30, gpu_count=1, gpu_total=24 << 30)
    first = estimate_fit(counted, machine, FitRequest(ctx=4096))
    assert first == estimate_fit(model, machine, FitRequest(ctx=4096))
    _CountedTensors.walks, shapes[:] = 0, []
    ctxs = (8192, 12288, 16384, 40960, 65536)
    for ctx in ctxs:
        estimate_fit(counted, machine, FitRequest(ctx=ctx))
    assert _CountedTensors.walks == 0 and shapes == []
