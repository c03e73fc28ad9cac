"""The caches a slider tick leans on are kept per model object (core/model/per_model_cache.py): a model opened again
is never compared field by field with the one kept, and one object finds its own results."""

from __future__ import annotations

import pytest

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.fit.auto_ctx import auto_fit, largest_ctx
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
