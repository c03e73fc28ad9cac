"""The per-backend speed model against published llama.cpp rows (benchmarks/data/llamacpp_published.csv).

The shipped constants are what a fresh fit of the rows gives; a few recorded rows are estimated
through the app's own path (a preset machine, `estimate_fit`, `fit_speed`) and land near what was
published and on the benchmark's own estimate; every preset says where its figures come from.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from published_speeds import Published, decode_row, estimate, prefill_row, read_rows, shape

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.presets import PRESETS, find_preset, with_presets
from gguf_budget.core.speed.backend_speed import SHIPPED, DecodeRow, PrefillRow, fit_backends
from gguf_budget.core.speed.estimate import fit_speed
from gguf_budget.core.speed.token_bytes import TokenPrices

GiB = 1 << 30


def fit_on(rows: list[Published]):
    decode: dict[Backend, list[DecodeRow]] = defaultdict(list)
    prefill: dict[Backend, list[PrefillRow]] = defaultdict(list)
    for r in rows:
        if r.decode:
            decode[r.backend].append(decode_row(r))
        else:
            prefill[r.backend].append(prefill_row(r))
    return fit_backends(decode, prefill)


def test_the_shipped_constants_are_the_fit_of_the_published_rows():
    rows = read_rows()
    assert len(rows) >= 140 and len({r.device for r in rows}) >= 30
    assert all(r.source.startswith("https://") for r in rows)
    assert fit_on(rows) == SHIPPED


def _row(device: str, model: str, quant: str, test: str) -> Published:
    return next(r for r in read_rows() if (r.device, r.model, r.quant, r.test) == (device, model, quant, test))


@pytest.mark.parametrize(("device", "model", "quant", "tests"), [
    ("RTX 4090", "llama2-7b", "Q4_0", ("tg128",)),                  # discussion 15013
    ("RTX 4090", "llama3-8b", "Q4_K_M", ("tg512", "pp512")),
    ("M2 Ultra 76-core 192GB", "llama3-8b", "Q4_K_M", ("tg512", "pp512")),
    ("RX 9070 XT", "qwen2.5-14b", "Q4_0", ("tg128", "pp512")),      # Vulkan
    ("H100 PCIe 80GB", "llama3-70b", "Q4_K_M", ("tg512",)),         # HBM
])
def test_the_app_estimates_a_published_row_as_the_benchmark_does(device, model, quant, tests):
    spec = shape(model, quant)
    machine = with_presets(device, hypothetical_machine(512 * GiB))
    typed = Bandwidths(backend=Backend.VULKAN) if device == "RX 9070 XT" else Bandwidths()  # the row ran Vulkan
    fit = estimate_fit(spec, machine, FitRequest(ctx=4096))
    assert fit.gpu_layers == spec.n_layer + 1 and fit.output_on_gpu  # every block and the output layer
    for test in tests:
        row = _row(device, model, quant, test)
        if row.decode:
            speed = fit_speed(TokenPrices.of(spec), fit, typed, start_tokens=row.tokens // 2)
            ours = speed.tok_s
        else:
            speed = fit_speed(TokenPrices.of(spec), fit, typed, prompt_tokens=row.tokens)
            assert speed.prefill is not None
            ours = speed.prefill.tok_s
        assert speed.gpu.speed.backend is row.backend
        bench = estimate(row, SHIPPED)
        assert ours == pytest.approx(bench, rel=0.03)  # the host's embedding row and fixed share aside
        assert 0.65 < bench / row.tok_s < 1.35


def test_every_preset_says_its_backend_compute_and_sources():
    names = [n.lower() for p in PRESETS for n in (p.name, *p.aliases)]
    assert len(names) == len(set(names))  # variants are named apart, aliases included
    for p in PRESETS:
        assert p.source and "http" in p.source and p.bandwidth > 0
        assert isinstance(p.backend, Backend) and p.backend is not Backend.CPU
        assert (p.fp16_flops or 0) > 0 or (p.gpu_cores and p.generation), p.name
        assert p.compute_source, p.name
    assert find_preset("A100 80GB").name == "A100 SXM 80GB" and find_preset("m2 ultra 192gb").gpu_cores == 76  # old names
    h100 = {p.name: p for p in PRESETS if p.name.startswith("H100")}
    assert set(h100) == {"H100 SXM 80GB", "H100 PCIe 80GB"} and h100["H100 SXM 80GB"].bandwidth > h100["H100 PCIe 80GB"].bandwidth
